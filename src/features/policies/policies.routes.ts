import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access, currentUser } from '../../http/access.js';
import { clientContext } from '../../http/request-context.js';
import { list, ListOf, normalizeGuid } from '../../http/schemas.js';
import { membershipOf, type OrgAccess } from '../organizations/org-access.js';
import { OrgParams, PolicyBody, PolicyResponse, PolicyTypeParams } from './policies.schemas.js';
import type { PolicyService } from './policies.service.js';

const tags = ['policies'];

/** Organization policies ({base_url}/organizations/{orgId}/policies/...). */
export const policyRoutes: FastifyPluginAsyncTypebox<{ policies: PolicyService; orgAccess: OrgAccess }> = async (app, { policies, orgAccess }) => {
  const manage = { access: orgAccess.right('managePolicies') };
  const base = '/organizations/:orgId/policies';

  app.get(base, { config: manage, schema: { tags, params: OrgParams, response: { 200: ListOf(PolicyResponse) } } }, async (request) =>
    list(await policies.list(membershipOf(request))),
  );

  // Static before the typed route: clients read it while accepting an invitation, before they are confirmed.
  app.get(`${base}/master-password`, { config: { access: access.user }, schema: { tags, params: OrgParams, response: { 200: PolicyResponse } } }, async (request) =>
    policies.masterPasswordPolicyOf(currentUser(request).userId, normalizeGuid(request.params.orgId)),
  );

  app.get(`${base}/:type`, { config: manage, schema: { tags, params: PolicyTypeParams, response: { 200: PolicyResponse } } }, async (request) =>
    policies.get(membershipOf(request), request.params.type),
  );

  app.put(`${base}/:type`, { config: manage, schema: { tags, params: PolicyTypeParams, body: PolicyBody, response: { 200: PolicyResponse } } }, async (request) =>
    policies.save(membershipOf(request), request.params.type, request.body, clientContext(request)),
  );
};
