import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access, currentUser } from '../../http/access.js';
import { clientContext } from '../../http/request-context.js';
import { emptyOk, EmptyResponse, IdParams, normalizeGuid } from '../../http/schemas.js';
import {
  accountKeysOf,
  ApiKeyResponse,
  KeysBody,
  KeysResponse,
  PasswordChangeBody,
  ProfileBody,
  ProfileResponse,
  RegisterBody,
  RegisterResponse,
  SecretVerificationBody,
  toProfileResponse,
  UserKeyIdBody,
  UserPublicKeyResponse,
} from './accounts.schemas.js';
import type { UserRow } from './accounts.repository.js';
import type { AccountService } from './accounts.service.js';

const tags = ['accounts'];

function keysResponse(user: UserRow) {
  return { object: 'keys' as const, key: user.key, publicKey: user.public_key, privateKey: user.private_key, accountKeys: accountKeysOf(user) };
}

/** The caller's organizations as `profile.organizations` shows them. */
export type ProfileOrganizations = (userId: string) => Promise<unknown[]>;

/** The account routes of the API service ({base_url}/accounts/...). */
export const accountRoutes: FastifyPluginAsyncTypebox<{ accounts: AccountService; organizations: ProfileOrganizations }> = async (
  app,
  { accounts, organizations },
) => {
  const user = { config: { access: access.user } };

  // The spec's registration path; current clients use /identity/accounts/register/finish.
  app.post(
    '/accounts/register',
    { config: { access: access.anonymous }, schema: { tags, body: RegisterBody, response: { 200: RegisterResponse } } },
    async (request) => {
      await accounts.registerLegacy(request.body);
      return { object: 'registerFinish' as const, captchaBypassToken: null };
    },
  );

  app.get('/accounts/profile', { ...user, schema: { tags, response: { 200: ProfileResponse } } }, async (request) => {
    const { userId } = currentUser(request);
    return toProfileResponse(await accounts.getUser(userId), await organizations(userId));
  });

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/accounts/profile',
      ...user,
      schema: { tags, body: ProfileBody, response: { 200: ProfileResponse } },
      handler: async (request) => {
        const { userId } = currentUser(request);
        return toProfileResponse(await accounts.updateProfile(userId, request.body), await organizations(userId));
      },
    });
  }

  // A bare JSON number (milliseconds); a negative one would make the CLI log out.
  app.get('/accounts/revision-date', { ...user, schema: { tags, response: { 200: Type.Number() } } }, async (request) => {
    const row = await accounts.getUser(currentUser(request).userId);
    return new Date(row.account_revision_date).getTime();
  });

  app.get('/accounts/keys', { ...user, schema: { tags, response: { 200: KeysResponse } } }, async (request) =>
    keysResponse(await accounts.getUser(currentUser(request).userId)),
  );

  app.post('/accounts/keys', { ...user, schema: { tags, body: KeysBody, response: { 200: KeysResponse } } }, async (request) => {
    const body = request.body;
    return keysResponse(await accounts.setKeys(currentUser(request).userId, body.publicKey, body.encryptedPrivateKey));
  });

  app.post('/accounts/password', { ...user, schema: { tags, body: PasswordChangeBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accounts.changePassword(currentUser(request).userId, request.body, clientContext(request));
    return emptyOk(reply);
  });

  app.post('/accounts/security-stamp', { ...user, schema: { tags, body: SecretVerificationBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accounts.rotateSecurityStamp(currentUser(request).userId, request.body.masterPasswordHash);
    return emptyOk(reply);
  });

  for (const [url, rotate] of [
    ['/accounts/api-key', false],
    ['/accounts/rotate-api-key', true],
  ] as const) {
    app.post(url, { ...user, schema: { tags, body: SecretVerificationBody, response: { 200: ApiKeyResponse } } }, async (request) => {
      const body = request.body;
      const key = await accounts.apiKey(currentUser(request).userId, body.masterPasswordHash, rotate);
      return { object: 'apiKey' as const, ...key };
    });
  }

  for (const [method, url] of [
    ['DELETE', '/accounts'],
    ['POST', '/accounts/delete'],
  ] as const) {
    app.route({
      method,
      url,
      ...user,
      schema: { tags, body: SecretVerificationBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await accounts.deleteAccount(currentUser(request).userId, request.body.masterPasswordHash);
        return emptyOk(reply);
      },
    });
  }

  // The 2026 CLI posts its user key id after login and fails the login when this is missing.
  app.post(
    '/accounts/key-management/user-key-id',
    { ...user, schema: { tags, body: UserKeyIdBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await accounts.setUserKeyId(currentUser(request).userId, request.body.userKeyId);
      return emptyOk(reply);
    },
  );

  app.get('/users/:id/public-key', { ...user, schema: { tags, params: IdParams, response: { 200: UserPublicKeyResponse } } }, async (request) => {
    const { id } = request.params;
    return { object: 'userKey' as const, ...(await accounts.publicKey(normalizeGuid(id))) };
  });
};
