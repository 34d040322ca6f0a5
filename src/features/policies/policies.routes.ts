import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { list, ListOf, normalizeGuid } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import { InvitationQuery, OrgParams, PolicyBody, PolicyResponse, PolicyTypeParams } from './policies.schemas.js';
import type { PolicyService } from './policies.service.js';

const tags = ['Policies'];

const MANAGE =
  'Access: a confirmed member holding managePolicies (`orgPermission(managePolicies)`: owners, admins, custom members with it); non-members get 404, other members 403.';
const docs = {
  list: { summary: "List an organization's policies", description: `Answers the policies saved for the organization, enabled or not. ${MANAGE}` },
  masterPassword: {
    summary: "Read an organization's master password policy",
    description:
      "Answers the organization's enabled master password policy to a user whose account holds a membership there in any status (an invitation counts once accepted, when it is linked to the account); clients read it while joining; 404 when there is none, or the organization cannot use policies. Access: any signed-in user (`user`).",
  },
  byToken: {
    summary: "Read an organization's policies with an invitation link",
    description:
      "Answers the organization's enabled policies to whoever holds an invitation link: the web vault reads them while the invitee registers, so the organization's master password policy applies to the new account. The token must be this server's unexpired invitation token for the membership `organizationUserId` and the invited `email`, and the membership must belong to the organization in the path; otherwise, and when the organization cannot use policies, 404, as the official server answers. Access: anonymous; the invitation token authorizes (`anonymous`).",
  },
  get: {
    summary: 'Read a policy',
    description: `Answers the organization's policy of the type in the path (an integer PolicyType), or a disabled default when none is saved (no id, dated the epoch, which clients also read a missing date as). ${MANAGE}`,
  },
  save: {
    summary: 'Save a policy',
    description: `Turns the policy of the type in the path on or off with its data (checked per type) and records Policy_Updated (1700). The body is \`{policy: {enabled, data}, metadata}\` (clients from 2026.5) or the older flat \`{enabled, data}\`; turning Enforce organization data ownership on with \`metadata.defaultUserCollectionName\` (encrypted) gives each confirmed member it binds (owners and admins exempt) their own "My Items" collection, unless they have one. Refused when the organization cannot use policies, when a policy that needs Single organization is turned on without it (or Single organization is turned off under one), and when Single organization is turned on while members other than owners and admins also belong to other organizations (the official server revokes them instead), and, while the organization's SSO uses trusted device encryption, when Require single sign-on or Account recovery administration with automatic enrolment is turned off (with Key Connector: Require single sign-on or Single organization). Automatic login with SSO (12) keeps \`data.idpHost\`, the identity provider hosts (comma-separated) the browser extension submits logins on. ${MANAGE}`,
  },
  saveVNext: {
    summary: 'Save a policy (vnext path)',
    description: `The same save as \`PUT /organizations/{orgId}/policies/{type}\`, at the path web vaults of 2025 and early 2026 send every policy dialog to, usually with the \`{policy, metadata}\` body. ${MANAGE}`,
  },
} satisfies Record<string, RouteDoc>;

/** Organization policies ({base_url}/organizations/{orgId}/policies/...). */
export const policyRoutes: FastifyPluginAsyncTypebox<{ policies: PolicyService; orgAccess: OrgAccess }> = async (app, { policies, orgAccess }) => {
  const manage = { access: orgAccess.right('managePolicies') };
  const base = '/organizations/:orgId/policies';

  app.get(base, { config: manage, schema: { tags, ...docs.list, params: OrgParams, response: { 200: ListOf(PolicyResponse) } } }, async (request) =>
    list(await policies.list(memberCaller(request))),
  );

  // Static before the typed route: clients read it while accepting an invitation, before they are confirmed.
  app.get(`${base}/master-password`, { config: { access: access.user }, schema: { tags, ...docs.masterPassword, params: OrgParams, response: { 200: PolicyResponse } } }, async (request) =>
    policies.masterPasswordPolicyOf(userCaller(request), normalizeGuid(request.params.orgId)),
  );

  // Anonymous: the invitee has no account yet; the invitation token is the proof.
  app.get(`${base}/token`, { config: { access: access.anonymous }, schema: { tags, ...docs.byToken, params: OrgParams, querystring: InvitationQuery, response: { 200: ListOf(PolicyResponse) } } }, async (request) => {
    const { token, email, organizationUserId } = request.query;
    return list(await policies.invitedPolicies(normalizeGuid(request.params.orgId), { token, email, organizationUserId: normalizeGuid(organizationUserId) }));
  });

  app.get(`${base}/:type`, { config: manage, schema: { tags, ...docs.get, params: PolicyTypeParams, response: { 200: PolicyResponse } } }, async (request) =>
    policies.get(memberCaller(request), request.params.type),
  );

  // The same save at both paths: web vaults of the putPolicyVNext period send every policy dialog to /vnext.
  for (const [path, doc] of [[`${base}/:type`, docs.save], [`${base}/:type/vnext`, docs.saveVNext]] as const) {
    app.put(path, { config: manage, schema: { tags, ...doc, params: PolicyTypeParams, body: PolicyBody, response: { 200: PolicyResponse } } }, async (request) =>
      policies.save(memberCaller(request), request.params.type, request.body),
    );
  }
};
