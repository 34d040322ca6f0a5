import { access } from '../../http/access.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, IdParams, list, ListOf, normalizeGuid } from '../../http/schemas.js';
import {
  AccessTokenCreateBody,
  AccessTokenCreationResponse,
  AccessTokenResponse,
  ServiceAccountBody,
  ServiceAccountDetailsResponse,
  ServiceAccountListQuery,
  ServiceAccountResponse,
} from './service-accounts.schemas.js';
import type { ServiceAccountService } from './service-accounts.service.js';
import { smCaller } from './sm-access.js';
import { BulkDeleteResult, IdArrayBody, IdsObjectBody, OrganizationIdParams } from './sm-schemas.js';

const tags = ['Machine accounts'];

const ACCESS =
  "Access: a user token (scope api) of a confirmed member with Secrets Manager access in an organization that has it, or a machine account token (scope api.secrets) of the organization (`secretsManager`); anyone else gets 404, as for a missing id.";
const READERS = 'Owners and admins reach every machine account, members those a people policy (their own or a group\'s) grants; machine accounts reach none.';

const docs = {
  list: {
    summary: "List an organization's machine accounts",
    description: `Answers the machine accounts the caller can read. With includeAccessToSecrets=true each carries accessToSecrets, the number of secrets (not in the trash) it reaches through its project and secret policies; otherwise 0. ${READERS} ${ACCESS}`,
  },
  get: { summary: 'Read a machine account', description: `Answers one machine account; 404 when the caller cannot read it. ${READERS} ${ACCESS}` },
  create: {
    summary: 'Create a machine account',
    description: `Creates a machine account with an encrypted name (at most 1000 characters) and records ServiceAccount_Created (2304). Users only: a machine account gets 404. A member who is not an admin receives the read+write people policy on it (ServiceAccount_UserAdded, 2300). Self-hosted, there is no plan limit. ${ACCESS}`,
  },
  update: { summary: 'Rename a machine account', description: `Changes a machine account's encrypted name; needs write access to it (404 otherwise). ${READERS} ${ACCESS}` },
  delete: {
    summary: 'Delete machine accounts',
    description: `Deletes the machine accounts among 1 to 1000 ids that the caller may write, with their access tokens (which stop working at once), and answers one {id, error} per id: error null when deleted, "access denied" otherwise. Records ServiceAccount_Deleted (2305) for each. An id that does not exist, is of another organization or that the caller may not write answers "access denied" on its own and the others are still deleted (one call acts in one organization: a machine account's own, otherwise that of the first id found). ${READERS} ${ACCESS}`,
  },
  listTokens: {
    summary: "List a machine account's access tokens",
    description: `Answers the access tokens of a machine account (encrypted name, scopes, expiry, dates); never their secrets. Needs read access to the machine account. ${READERS} ${ACCESS}`,
  },
  createToken: {
    summary: 'Create an access token',
    description: `Creates an access token for a machine account from the client's encrypted name (at most 200 characters), encryptedPayload (at most 4000) and key, with an optional expireAt that must lie in the future. The server generates the 30-character client secret, answers it once in clientSecret and keeps only its SHA-256 hash. Needs write access to the machine account. ${READERS} ${ACCESS}`,
  },
  revokeTokens: {
    summary: 'Revoke access tokens',
    description: `Deletes the listed access tokens of this machine account (ids of other tokens are ignored); they are refused at once, at login and on every request. Needs write access to the machine account. ${READERS} ${ACCESS}`,
  },
} satisfies Record<string, RouteDoc>;

/** Secrets Manager machine accounts (the official "service accounts") and their access tokens. */
export const serviceAccountRoutes: FastifyPluginAsyncTypebox<{ serviceAccounts: ServiceAccountService }> = async (app, { serviceAccounts }) => {
  const config = { access: access.userOrServiceAccount };
  const base = '/organizations/:organizationId/service-accounts';

  app.get(
    base,
    { config, schema: { tags, ...docs.list, params: OrganizationIdParams, querystring: ServiceAccountListQuery, response: { 200: ListOf(ServiceAccountDetailsResponse) } } },
    async (request) => list(await serviceAccounts.list(smCaller(request), normalizeGuid(request.params.organizationId), request.query.includeAccessToSecrets ?? false)),
  );

  app.post(base, { config, schema: { tags, ...docs.create, params: OrganizationIdParams, body: ServiceAccountBody, response: { 200: ServiceAccountResponse } } }, async (request) =>
    serviceAccounts.create(smCaller(request), normalizeGuid(request.params.organizationId), request.body),
  );

  app.get('/service-accounts/:id', { config, schema: { tags, ...docs.get, params: IdParams, response: { 200: ServiceAccountResponse } } }, async (request) =>
    serviceAccounts.get(smCaller(request), normalizeGuid(request.params.id)),
  );

  app.put('/service-accounts/:id', { config, schema: { tags, ...docs.update, params: IdParams, body: ServiceAccountBody, response: { 200: ServiceAccountResponse } } }, async (request) =>
    serviceAccounts.update(smCaller(request), normalizeGuid(request.params.id), request.body),
  );

  app.post('/service-accounts/delete', { config: { ...config, callerLimit: 'bulk' }, schema: { tags, ...docs.delete, body: IdArrayBody, response: { 200: ListOf(BulkDeleteResult) } } }, async (request) =>
    list(await serviceAccounts.delete(smCaller(request), request.body)),
  );

  app.get('/service-accounts/:id/access-tokens', { config, schema: { tags, ...docs.listTokens, params: IdParams, response: { 200: ListOf(AccessTokenResponse) } } }, async (request) =>
    list(await serviceAccounts.listTokens(smCaller(request), normalizeGuid(request.params.id))),
  );

  app.post(
    '/service-accounts/:id/access-tokens',
    { config, schema: { tags, ...docs.createToken, params: IdParams, body: AccessTokenCreateBody, response: { 200: AccessTokenCreationResponse } } },
    async (request) => serviceAccounts.createToken(smCaller(request), normalizeGuid(request.params.id), request.body),
  );

  app.post(
    '/service-accounts/:id/access-tokens/revoke',
    { config, schema: { tags, ...docs.revokeTokens, params: IdParams, body: IdsObjectBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await serviceAccounts.revokeTokens(smCaller(request), normalizeGuid(request.params.id), request.body.ids);
      return emptyOk(reply);
    },
  );
};
