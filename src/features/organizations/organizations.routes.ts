import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Config } from '../../config/config.js';
import { access, currentUser, type AccessRule } from '../../http/access.js';
import { clientContext } from '../../http/request-context.js';
import { emptyOk, EmptyResponse, IdParams, ListOf, list } from '../../http/schemas.js';
import { requireVariant } from '../../http/variant.js';
import { LicenseDocument } from './licenses.js';
import { membershipOf, type OrgAccess } from './org-access.js';
import type { LicenseService } from './organization-licenses.js';
import {
  ApiKeyBody,
  ApiKeyResponse,
  ApplyLicenseBody,
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
  config: Pick<Config, 'selfHosted'>;
}> = async (app, { organizations, licenses, orgAccess, config }) => {
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
    { config: { access: onlyOn('selfhosted', access.user) }, schema: { tags, body: ApplyLicenseBody, response: { 200: OrganizationResponse } } },
    async (request) => toOrganizationResponse(await licenses.apply(currentUser(request).userId, request.body), { billing: true }),
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
