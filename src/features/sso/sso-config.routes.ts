import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { list, ListOf, OrgParams } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import { DomainSsoDetailsRequest, OrganizationSsoRequest, OrganizationSsoResponse, VerifiedDomainSsoDetail } from './sso-config.schemas.js';
import type { SsoConfigService } from './sso-config.service.js';

// Under Organizations: the settings belong to the organization (the login flow's routes have their own tag).
const tags = ['Organizations'];

const MANAGE =
  'Access: a confirmed member holding manageSso (`orgPermission(manageSso)`: owners, admins, custom members with it); non-members get 404, other members 403 (the official server answers them 404).';
const docs = {
  get: {
    summary: "Read an organization's single sign-on settings",
    description: `Answers whether SSO is on, the organization's SSO identifier, the OpenID Connect settings (\`data\`, null before the first save; the client secret is never answered: \`clientSecret\` is null, and a save without it keeps the stored one; the SAML fields at their defaults, SAML 2.0 not being offered yet) and the URLs to give the identity provider (\`urls.callbackPath\`: PUBLIC_URL/sso/oidc-signin). ${MANAGE}`,
  },
  save: {
    summary: "Save an organization's single sign-on settings",
    description: `Saves the SSO identifier (unique across organizations, case-insensitive) and the OpenID Connect settings. Turning SSO on needs an identifier, an https authority (http only on loopback), a client ID and a client secret (given, or stored from before), and first reads the provider's discovery document (\`{authority}/.well-known/openid-configuration\` or the metadata address, within 5 s, at public addresses unless SSO_ALLOW_PRIVATE_ADDRESSES), which must name the authority as issuer and have authorization, token and key endpoints; otherwise 400 and nothing is saved. Choosing trusted devices (memberDecryptionType 2) turns on the Single organization, Account recovery (automatic enrollment) and Require single sign-on policies in the same save, as officially (each records Policy_Updated, 1700; a policy that cannot be turned on refuses the whole save). SAML 2.0 and Key Connector are refused (400). The client secret is sealed at rest; an empty or absent one keeps the stored one. Records Organization_EnabledSso (1604) or Organization_DisabledSso (1605) when SSO is turned on or off. ${MANAGE}`,
  },
  verifiedDomains: {
    summary: 'List the organizations whose verified domain matches an email',
    description:
      "The web vault's SSO login page asks which organizations have verified the domain of the email typed, to fill in the SSO identifier. Strongroom does not offer domain verification, so the answer is always the official answer for no match, an empty list, and the page asks for the identifier. Access: anonymous (`anonymous`), as officially.",
  },
} satisfies Record<string, RouteDoc>;

/** `{base_url}/organizations/{orgId}/sso` and the SSO login page's domain lookup. */
export const ssoConfigRoutes: FastifyPluginAsyncTypebox<{ sso: SsoConfigService; orgAccess: OrgAccess }> = async (app, { sso, orgAccess }) => {
  const manage = { access: orgAccess.right('manageSso') };

  app.get('/organizations/:orgId/sso', { config: manage, schema: { tags, ...docs.get, params: OrgParams, response: { 200: OrganizationSsoResponse } } }, async (request) =>
    sso.get(memberCaller(request)),
  );

  app.post(
    '/organizations/:orgId/sso',
    { config: manage, schema: { tags, ...docs.save, params: OrgParams, body: OrganizationSsoRequest, response: { 200: OrganizationSsoResponse } } },
    async (request) => sso.save(memberCaller(request), request.body),
  );

  // Anonymous, as officially: the login page asks before anyone is signed in. Nothing is looked up.
  app.post(
    '/organizations/domain/sso/verified',
    { config: { access: access.anonymous }, schema: { tags, ...docs.verifiedDomains, body: DomainSsoDetailsRequest, response: { 200: ListOf(VerifiedDomainSsoDetail) } } },
    async () => list([]),
  );
};
