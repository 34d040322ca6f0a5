import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config/config.js';
import { access, type AccessRule } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, IdParams, ListOf, list, normalizeGuid } from '../../http/schemas.js';
import { requireVariant } from '../../http/variant.js';
import { LICENSE_MAX_BYTES, multipartLicenseBody } from './license-upload.js';
import { LicenseDocument } from './licenses.js';
import { OrganizationKeysResponse, OrganizationPublicKeyResponse, type OrganizationKeysService } from './organization-keys.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import type { LicenseService } from './organization-licenses.js';
import {
  ApiKeyBody,
  ApiKeyResponse,
  ApplyLicenseBody,
  CollectionManagementBody,
  OrganizationKeys,
  AutoEnrollStatusResponse,
  CreateOrganizationBody,
  IdentifierParams,
  LicenseFileBody,
  LicenseQuery,
  OrganizationResponse,
  PaymentResponse,
  ProfileOrganizationResponse,
  SecretBody,
  SsoParams,
  StorageBody,
  UpdateOrganizationBody,
} from './organizations.schemas.js';
import type { OrganizationService } from './organizations.service.js';

const tags = ['Organizations'];

const USER = 'Access: any signed-in user (`user`).';
const MEMBER = 'Access: a confirmed member of the organization (`orgMember`; anyone else gets 404).';
const right = (name: string, who: string) => `Access: a confirmed member holding ${name} (\`orgPermission(${name})\`: ${who}); non-members get 404, other members 403.`;
const CLOUD = 'Cloud only: on self-hosted every caller gets 400 "Only allowed when not self hosted.", before any organization rule.';
const docs = {
  list: {
    summary: "List the caller's organizations",
    description: `Answers the organizations the caller is a confirmed member of, as the profile shows them: their role, permissions and organization key, and each organization's plan features. ${USER}`,
  },
  create: {
    summary: 'Create an organization',
    description: `Creates an organization on the plan given (seats and storage beyond it where the plan allows; no payment is taken) with its keys, the caller as its confirmed owner and, when named, a first collection. ${CLOUD} ${USER}`,
  },
  applyLicense: {
    summary: 'Apply an organization license',
    description: `Founds the organization described by a license signed by this server's key or a configured issuer key, with the caller as its confirmed owner (each license once); licenses are this server's own signed JSON documents, sent as JSON or as the web vault uploads them (multipart/form-data: the file in \`license\`, \`key\`, \`collectionName\`; at most 100,000 bytes). Self-hosted only: on cloud every caller gets 400 "Only allowed when self hosted.", before any other rule. ${USER}`,
  },
  updateLicense: {
    summary: "Replace a self-hosted organization's license",
    description: `Replaces the organization's license with a renewed one (JSON \`{ license }\` or multipart/form-data with the file in \`license\`): it must pass the checks of a new license (trusted issuer, intact signature, not expired, this installation), name this organization, be no other organization's, and fit what the organization already uses (seats filled, collections, groups, enabled policies); each refusal is a 400 naming \`license\`. Name, plan, seats, limits, features and expiry become the license's. Self-hosted only: on cloud every caller gets 400 "Only allowed when self hosted.", before any other rule. Access: a confirmed owner (\`orgOwner\`); anyone else gets 404, as the official server answers.`,
  },
  syncLicense: {
    summary: "Sync a self-hosted organization's license from the cloud",
    description: `The official server fetches the license through the organization's billing-sync connection to the Bitwarden cloud; this server has no cloud to reach, so it answers as the official server does without that connection: 404 "Unable to get Cloud Billing Sync connection", saying to upload the license file instead. Self-hosted only: on cloud every caller gets 400 "Only allowed when self hosted.", before any other rule. Access: a confirmed owner (\`orgOwner\`); anyone else gets 404.`,
  },
  get: {
    summary: 'Read an organization',
    description: `Answers the organization's settings, plan and features to any confirmed member (the official server answers owners only), leaving out \`billingEmail\` and \`businessName\` for members without manageOrganization. ${MEMBER}`,
  },
  update: {
    summary: 'Update an organization',
    description: `Changes the organization's name, business name, SSO identifier, billing email (only owners change it) and, once, its key pair, and records Organization_Updated (1600). ${right('manageOrganization', 'owners and admins')}`,
  },
  collectionManagement: {
    summary: "Change an organization's collection management",
    description: `Sets whether only owners and admins create collections (\`limitCollectionCreation\`), delete them (\`limitCollectionDeletion\`) and delete items (\`limitItemDeletion\`), and whether owners and admins reach every collection's items (\`allowAdminAccessToAllCollectionItems\`); every confirmed member syncs again, and Organization_CollectionManagement_Updated (1609) is recorded. Access: a confirmed owner (\`orgOwner\`); anyone else gets 404, as on the official server.`,
  },
  leave: {
    summary: 'Leave an organization',
    description: `Deletes the caller's own membership and records OrganizationUser_Left (1516); refused (400) for the only confirmed owner. ${MEMBER}`,
  },
  delete: {
    summary: 'Delete an organization',
    description: `Deletes the organization with its members, collections, groups, policies and items after checking the caller's master password hash (\`secret\` or \`masterPasswordHash\`); members' clients drop it at their next sync. ${right('deleteOrganization', 'owners')}`,
  },
  apiKey: {
    summary: 'Read an organization API key',
    description: `Answers the organization API key of the type asked, creating it when missing, after checking the master password hash: the SCIM key needs manageScim, the others (the default public API key, billing sync) manageApiKey, which only owners hold; billing-sync and SCIM keys exist on Teams and Enterprise plans only (404 otherwise). Access: a confirmed member holding manageApiKey or manageScim (\`orgPermission(manageApiKey|manageScim)\`); non-members get 404, other members 403.`,
  },
  rotateApiKey: {
    summary: 'Rotate an organization API key',
    description: `Replaces the organization API key of the type asked with a new random one after checking the master password hash, under the rules of \`POST /organizations/{id}/api-key\`; tokens issued under the old public API key stop working. Access: a confirmed member holding manageApiKey or manageScim (\`orgPermission(manageApiKey|manageScim)\`); non-members get 404, other members 403.`,
  },
  autoEnrollStatus: {
    summary: 'Read the account recovery auto-enrolment status',
    description: `Answers the id of the organization named by SSO identifier or id, and whether its account recovery policy enrols joining members automatically, to a user with a membership there (404 otherwise). ${USER}`,
  },
  unlinkSso: {
    summary: 'Unlink single sign-on from an organization',
    description: `Removes the caller's link to the organization's identity provider (so \`ssoBound\` turns false and the next SSO login links the account again) and records OrganizationUser_UnlinkedSso (1505) for the caller's membership; 404 when the caller has neither a membership nor a link there. As officially, an account without a master password may unlink too. ${USER}`,
  },
  storage: {
    summary: "Adjust an organization's storage",
    description: `Adds or removes GB of storage on top of the plan's (at most 99 more, never below the plan's nor below what is used; no payment is taken) and records Organization_Updated (1600). ${CLOUD} ${right('editSubscription', 'owners')}`,
  },
  downloadLicense: {
    summary: 'Download an organization license',
    description: `Answers a license for the organization signed by this server, bound to the \`installationId\` of the self-hosted server that will apply it and valid until the organization expires, or a year. ${CLOUD} ${right('editSubscription', 'owners')}`,
  },
} satisfies Record<string, RouteDoc>;

/** The organization routes of the API service ({base_url}/organizations/...). */
export const organizationRoutes: FastifyPluginAsyncTypebox<{
  organizations: OrganizationService;
  licenses: LicenseService;
  orgAccess: OrgAccess;
  keys: OrganizationKeysService;
  config: Pick<Config, 'selfHosted'>;
}> = async (app, { organizations, licenses, orgAccess, keys, config }) => {
  // Only the license upload reads multipart bodies (multipartLicenseBody); its limits are set there.
  await app.register(multipart, { limits: { fileSize: LICENSE_MAX_BYTES } });
  /**
   * A variant-only operation answers the variant refusal to every signed-in caller, before
   * any organization rule, as the official [SelfHosted] filter does.
   */
  const onlyOn = (variant: 'cloud' | 'selfhosted', rule: AccessRule): AccessRule => ({
    ...rule,
    name: `${rule.name}[${variant}]`,
    async authorize(request, principal) {
      requireVariant(config, variant);
      await rule.authorize?.(request, principal);
    },
  });
  const member = { config: { access: orgAccess.member('id') } };
  const user = { config: { access: access.user } };

  app.get('/organizations', { ...user, schema: { tags, ...docs.list, response: { 200: ListOf(ProfileOrganizationResponse) } } }, async (request) =>
    list(await organizations.list(userCaller(request))),
  );

  app.post(
    '/organizations',
    { config: { access: onlyOn('cloud', access.user) }, schema: { tags, ...docs.create, body: CreateOrganizationBody, response: { 200: OrganizationResponse } } },
    async (request) => organizations.create(userCaller(request), request.body),
  );

  // The web vault posts to licenses/self-hosted (the official SelfHostedOrganizationLicensesController); license is this server's first path.
  for (const url of ['/organizations/licenses/self-hosted', '/organizations/license']) {
    app.post(
      url,
      {
        config: { access: onlyOn('selfhosted', access.user) },
        schema: {
          tags,
          ...docs.applyLicense,
          body: ApplyLicenseBody,
          response: { 200: OrganizationResponse },
        },
        preValidation: multipartLicenseBody,
      },
      async (request) => licenses.apply(userCaller(request), request.body),
    );
  }

  app.post(
    '/organizations/licenses/self-hosted/:id',
    {
      config: { access: onlyOn('selfhosted', orgAccess.owner('id')) },
      schema: { tags, ...docs.updateLicense, params: IdParams, body: LicenseFileBody, response: { 200: EmptyResponse } },
      preValidation: multipartLicenseBody,
    },
    async (request, reply) => {
      await licenses.update(memberCaller(request), request.body.license);
      return emptyOk(reply);
    },
  );

  app.post(
    '/organizations/licenses/self-hosted/:id/sync',
    { config: { access: onlyOn('selfhosted', orgAccess.owner('id')) }, schema: { tags, ...docs.syncLicense, params: IdParams, response: { 200: EmptyResponse } } },
    (request) => licenses.sync(memberCaller(request)),
  );

  app.get(
    '/organizations/:id/keys',
    {
      ...user,
      schema: {
        summary: "The organization's key pair",
        description:
          "Its public key, to any signed-in user as on the official server (a member made just in time by SSO, still only accepted, reads it to enroll in account recovery); its private key, encrypted with the organization key, to confirmed members only (null otherwise). 404 for an unknown organization. Access: any signed-in user (`user`).",
        tags,
        params: IdParams,
        response: { 200: OrganizationKeysResponse },
      },
    },
    async (request) => keys.get(userCaller(request), normalizeGuid(request.params.id)),
  );

  app.get(
    '/organizations/:id/public-key',
    {
      ...user,
      schema: {
        summary: "The organization's public key",
        description:
          "Answers the organization's public key, null while it has no key pair; 404 for an unknown organization. An invitee not yet a member reads it to wrap their user key when joining enrols them in account recovery, so, as on the official server, any signed-in user may. Access: any signed-in user (`user`).",
        tags,
        params: IdParams,
        response: { 200: OrganizationPublicKeyResponse },
      },
    },
    async (request) => keys.publicKey(userCaller(request), normalizeGuid(request.params.id)),
  );

  app.post(
    '/organizations/:id/keys',
    {
      config: { access: orgAccess.right('manageResetPassword', 'id') },
      schema: {
        summary: "Set the organization's key pair",
        description:
          'Sets the key pair of an organization that has none (the web vault does so right after creating one from a license); 400 "Organization Keys already exist" otherwise. Owners, admins and custom members with manageResetPassword.',
        tags,
        params: IdParams,
        body: OrganizationKeys,
        response: { 200: OrganizationKeysResponse },
      },
    },
    async (request) => organizations.setKeysOnce(memberCaller(request), request.body),
  );

  app.get('/organizations/:id', { ...member, schema: { tags, ...docs.get, params: IdParams, response: { 200: OrganizationResponse } } }, async (request) =>
    organizations.get(memberCaller(request)),
  );

  // POST is the official deprecated alias of PUT.
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/organizations/:id',
      config: { access: orgAccess.right('manageOrganization', 'id') },
      schema: { tags, ...(method === 'PUT' ? docs.update : olderForm(docs.update, 'PUT /organizations/{id}')), params: IdParams, body: UpdateOrganizationBody, response: { 200: OrganizationResponse } },
      handler: async (request) => organizations.update(memberCaller(request), request.body),
    });
  }

  app.put(
    '/organizations/:id/collection-management',
    { config: { access: orgAccess.owner('id') }, schema: { tags, ...docs.collectionManagement, params: IdParams, body: CollectionManagementBody, response: { 200: OrganizationResponse } } },
    async (request) => organizations.updateCollectionManagement(memberCaller(request), request.body),
  );

  app.post('/organizations/:id/leave', { ...member, schema: { tags, ...docs.leave, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await organizations.leave(memberCaller(request));
    return emptyOk(reply);
  });

  for (const [method, url] of [
    ['DELETE', '/organizations/:id'],
    ['POST', '/organizations/:id/delete'],
  ] as const) {
    app.route({
      method,
      url,
      config: { access: orgAccess.right('deleteOrganization', 'id') },
      schema: { tags, ...(method === 'DELETE' ? docs.delete : olderForm(docs.delete, 'DELETE /organizations/{id}')), params: IdParams, body: SecretBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await organizations.delete(memberCaller(request), request.body);
        return emptyOk(reply);
      },
    });
  }

  for (const [url, rotate] of [
    ['/organizations/:id/api-key', false],
    ['/organizations/:id/rotate-api-key', true],
  ] as const) {
    // Owners for the default key, manageScim for the SCIM key: the service checks the one the body names.
    app.post(url, { config: { access: orgAccess.anyRight(['manageApiKey', 'manageScim'], 'id') }, schema: { tags, ...(rotate ? docs.rotateApiKey : docs.apiKey), params: IdParams, body: ApiKeyBody, response: { 200: ApiKeyResponse } } }, async (request) =>
      organizations.apiKey(memberCaller(request), request.body, rotate),
    );
  }

  app.get(
    '/organizations/:id/auto-enroll-status',
    { ...user, schema: { tags, ...docs.autoEnrollStatus, params: IdentifierParams, response: { 200: AutoEnrollStatusResponse } } },
    async (request) => organizations.autoEnrollStatus(userCaller(request), request.params.id),
  );

  app.delete(
    '/accounts/sso/:organizationId',
    { ...user, schema: { tags, ...docs.unlinkSso, params: SsoParams, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await organizations.unlinkSso(userCaller(request), request.params.organizationId);
      return emptyOk(reply);
    },
  );

  app.post(
    '/organizations/:id/storage',
    {
      config: { access: onlyOn('cloud', orgAccess.right('editSubscription', 'id')) },
      schema: { tags, ...docs.storage, params: IdParams, body: StorageBody, response: { 200: PaymentResponse } },
    },
    async (request) => organizations.adjustStorage(memberCaller(request), request.body.storageGbAdjustment),
  );

  app.get(
    '/organizations/:id/license',
    {
      config: { access: onlyOn('cloud', orgAccess.right('editSubscription', 'id')) },
      schema: { tags, ...docs.downloadLicense, params: IdParams, querystring: LicenseQuery, response: { 200: LicenseDocument } },
    },
    async (request) => licenses.download(memberCaller(request), request.query.installationId),
  );
};
