import multipart from '@fastify/multipart';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config/config.js';
import { access, currentUser, type AccessRule } from '../../http/access.js';
import { clientContext } from '../../http/request-context.js';
import { emptyOk, EmptyResponse, IdParams, ListOf, list } from '../../http/schemas.js';
import { requireVariant } from '../../http/variant.js';
import { LICENSE_MAX_BYTES, multipartLicenseBody } from './license-upload.js';
import { LicenseDocument } from './licenses.js';
import {
  OrganizationKeysResponse,
  OrganizationPublicKeyResponse,
  SelfHostBillingMetadataResponse,
  type OrganizationKeysService,
} from './organization-keys.js';
import { membershipOf, type OrgAccess } from './org-access.js';
import type { LicenseService } from './organization-licenses.js';
import {
  ApiKeyBody,
  ApiKeyResponse,
  ApplyLicenseBody,
  OrganizationKeys,
  AutoEnrollStatusResponse,
  CreateOrganizationBody,
  IdentifierParams,
  LicenseQuery,
  OrganizationResponse,
  PaymentResponse,
  ProfileOrganizationResponse,
  SecretBody,
  SsoParams,
  StorageBody,
  toOrganizationResponse,
  UpdateOrganizationBody,
} from './organizations.schemas.js';
import type { OrganizationService } from './organizations.service.js';

const tags = ['organizations'];

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

  app.get('/organizations', { ...user, schema: { tags, response: { 200: ListOf(ProfileOrganizationResponse) } } }, async (request) =>
    list(await organizations.list(currentUser(request).userId)),
  );

  app.post(
    '/organizations',
    { config: { access: onlyOn('cloud', access.user) }, schema: { tags, body: CreateOrganizationBody, response: { 200: OrganizationResponse } } },
    async (request) => toOrganizationResponse(await organizations.create(currentUser(request).userId, request.body), { billing: true }),
  );

  app.post(
    '/organizations/license',
    {
      config: { access: onlyOn('selfhosted', access.user) },
      schema: {
        summary: 'Create an organization from a license',
        description:
          "Self-hosted only. JSON, or multipart/form-data as the web vault uploads it (the file in `license`, `key`, `collectionName`; at most 100,000 bytes). The caller becomes the organization's Confirmed Owner.",
        tags,
        body: ApplyLicenseBody,
        response: { 200: OrganizationResponse },
      },
      preValidation: multipartLicenseBody,
    },
    async (request) => toOrganizationResponse(await licenses.apply(currentUser(request).userId, request.body), { billing: true }),
  );

  app.get(
    '/organizations/:id/keys',
    {
      ...member,
      schema: {
        summary: "The organization's key pair",
        description: "Its public key and its private key encrypted with the organization key, to every confirmed member.",
        tags,
        params: IdParams,
        response: { 200: OrganizationKeysResponse },
      },
    },
    async (request) => keys.get(membershipOf(request).organizationId),
  );

  app.get(
    '/organizations/:id/public-key',
    {
      ...member,
      schema: {
        summary: "The organization's public key",
        description: 'To every confirmed member; null while the organization has no key pair.',
        tags,
        params: IdParams,
        response: { 200: OrganizationPublicKeyResponse },
      },
    },
    async (request) => keys.publicKey(membershipOf(request).organizationId),
  );

  // A self-hosted web vault reads this before it opens the member dialogs of the Admin Console.
  app.get(
    '/organizations/:id/billing/vnext/self-host/metadata',
    {
      ...member,
      schema: {
        summary: 'Seat usage (self-hosted web vault)',
        description:
          'To every confirmed member: the seats in use (every membership but revoked ones). There is no Secrets Manager standalone plan. Served on both variants: the answer holds on either.',
        tags,
        params: IdParams,
        response: { 200: SelfHostBillingMetadataResponse },
      },
    },
    async (request) => keys.selfHostBillingMetadata(membershipOf(request).organizationId),
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
    async (request) => keys.set(membershipOf(request).organizationId, request.body),
  );

  app.get('/organizations/:id', { ...member, schema: { tags, params: IdParams, response: { 200: OrganizationResponse } } }, async (request) => {
    const { org, billing } = await organizations.get(membershipOf(request));
    return toOrganizationResponse(org, { billing });
  });

  // POST is the official deprecated alias of PUT.
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/organizations/:id',
      config: { access: orgAccess.right('manageOrganization', 'id') },
      schema: { tags, params: IdParams, body: UpdateOrganizationBody, response: { 200: OrganizationResponse } },
      handler: async (request) =>
        toOrganizationResponse(await organizations.update(membershipOf(request), request.body, clientContext(request)), { billing: true }),
    });
  }

  app.post('/organizations/:id/leave', { ...member, schema: { tags, params: IdParams, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await organizations.leave(membershipOf(request), clientContext(request));
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
      schema: { tags, params: IdParams, body: SecretBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await organizations.delete(membershipOf(request), request.body);
        return emptyOk(reply);
      },
    });
  }

  for (const [url, rotate] of [
    ['/organizations/:id/api-key', false],
    ['/organizations/:id/rotate-api-key', true],
  ] as const) {
    // Owners for the default key, manageScim for the SCIM key: the service checks the one the body names.
    app.post(url, { config: { access: orgAccess.anyRight(['manageApiKey', 'manageScim'], 'id') }, schema: { tags, params: IdParams, body: ApiKeyBody, response: { 200: ApiKeyResponse } } }, async (request) => ({
      object: 'apiKey' as const,
      ...(await organizations.apiKey(membershipOf(request), request.body, rotate)),
    }));
  }

  app.get(
    '/organizations/:id/auto-enroll-status',
    { ...user, schema: { tags, params: IdentifierParams, response: { 200: AutoEnrollStatusResponse } } },
    async (request) => ({
      object: 'organizationAutoEnrollStatus' as const,
      ...(await organizations.autoEnrollStatus(currentUser(request).userId, request.params.id)),
    }),
  );

  app.delete(
    '/accounts/sso/:organizationId',
    { ...user, schema: { tags, params: SsoParams, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await organizations.unlinkSso(currentUser(request).userId, request.params.organizationId, clientContext(request));
      return emptyOk(reply);
    },
  );

  app.post(
    '/organizations/:id/storage',
    {
      config: { access: onlyOn('cloud', orgAccess.right('editSubscription', 'id')) },
      schema: { tags, params: IdParams, body: StorageBody, response: { 200: PaymentResponse } },
    },
    async (request) => {
      await organizations.adjustStorage(membershipOf(request), request.body.storageGbAdjustment, clientContext(request));
      return { object: 'payment' as const, success: true, paymentIntentClientSecret: null };
    },
  );

  app.get(
    '/organizations/:id/license',
    {
      config: { access: onlyOn('cloud', orgAccess.right('editSubscription', 'id')) },
      schema: { tags, params: IdParams, querystring: LicenseQuery, response: { 200: LicenseDocument } },
    },
    async (request) => licenses.download(membershipOf(request).organizationId, request.query.installationId),
  );
};
