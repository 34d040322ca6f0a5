import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { access } from '../../http/access.js';
import { userCaller } from '../../http/request-context.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, IdParams, ListOf, emptyOk, list } from '../../http/schemas.js';
import { SecretBody } from '../two-factor/two-factor.schemas.js';
import type { PasskeyLoginService } from './passkey-login.service.js';
import type { PasskeyService } from './passkeys.service.js';
import { AssertionOptionsResponse, CreateOptionsResponse, CreatePasskeyBody, PasskeyResponse, UpdatePasskeyBody } from './passkeys.schemas.js';

/** The API's routes sit with the account's other settings, the login options with the other identity routes. */
const tags = ['Accounts'];
const identityTags = ['Identity'];
const user = { config: { access: access.user } };
const VERIFIED = 'after the master password hash (`secret` or `masterPasswordHash`; a wrong or missing one answers 400 "User verification failed.")';

const docs = {
  list: {
    summary: "List the caller's passkeys for logging in",
    description:
      'The passkeys the caller logs in with (not the two-step login security keys of `/two-factor/get-webauthn`): id, name, `prfStatus` (0 the passkey also unlocks the vault, 1 it could but holds no keys, 2 it cannot) and the wrapped keys a key rotation re-wraps. Access: any signed-in user (`user`).',
  },
  attestationOptions: {
    summary: 'Start registering a passkey',
    description: `The options for navigator.credentials.create (a discoverable credential for this server's relying party, with user verification; the caller's passkeys excluded) and the token that registers its answer within 7 minutes, ${VERIFIED}. Refused (400) while an organization's Require single sign-on policy binds the caller, or when the caller already has 5 passkeys. Access: any signed-in user (\`user\`).`,
  },
  create: {
    summary: 'Register a passkey',
    description:
      "Verifies the attestation (`deviceResponse`) against the options' `token` (used once) and keeps the passkey under `name`. With `supportsPrf` and the user key wrapped for the passkey's PRF output (`encryptedUserKey`, `encryptedPublicKey`, `encryptedPrivateKey`, all three or none), the passkey also unlocks the vault. At most 5 passkeys per account; refused while an organization requires single sign-on. Access: any signed-in user (`user`).",
  },
  assertionOptions: {
    summary: 'Start wrapping the vault keys for a passkey',
    description: `The options for navigator.credentials.get (any of the caller's passkeys, with user verification) and the token, bound to the caller, that \`PUT /webauthn\` answers within 17 minutes, ${VERIFIED}. Access: any signed-in user (\`user\`).`,
  },
  update: {
    summary: 'Store the vault keys for a passkey',
    description:
      "Verifies an assertion by one of the caller's passkeys that supports PRF against the options' `token` (used once), then stores the user key wrapped for its PRF output: the passkey then also unlocks the vault. Access: any signed-in user (`user`).",
  },
  remove: {
    summary: 'Remove a passkey',
    description: `Removes one of the caller's passkeys ${VERIFIED}; an id that is not one of them answers 404. Access: any signed-in user (\`user\`).`,
  },
  loginOptions: {
    summary: 'Start logging in with a passkey',
    description:
      'Anonymous assertion options for any passkey of this relying party (an empty allow list: the user picks one, and its user handle names the account) and the token that `grant_type=webauthn` at `/connect/token` answers within 17 minutes. Nothing is stored until a login succeeds; the identity IP rules limit it like the other identity routes (docs/rate-limits.md). Access: anonymous.',
  },
} satisfies Record<string, RouteDoc>;

/** The caller's passkeys for logging in ({base_url}/webauthn, the official WebAuthnController). */
export const passkeyRoutes: FastifyPluginAsyncTypebox<{ passkeys: PasskeyService }> = async (app, { passkeys }) => {
  app.get('/webauthn', { ...user, schema: { tags, ...docs.list, response: { 200: ListOf(PasskeyResponse) } } }, async (request) => list(await passkeys.list(userCaller(request))));

  app.post('/webauthn/attestation-options', { ...user, schema: { tags, ...docs.attestationOptions, body: SecretBody, response: { 200: CreateOptionsResponse } } }, async (request) =>
    passkeys.attestationOptions(userCaller(request), request.body),
  );

  app.post('/webauthn', { ...user, schema: { tags, ...docs.create, body: CreatePasskeyBody, response: { 200: PasskeyResponse } } }, async (request) =>
    passkeys.create(userCaller(request), request.body),
  );

  app.post('/webauthn/assertion-options', { ...user, schema: { tags, ...docs.assertionOptions, body: SecretBody, response: { 200: AssertionOptionsResponse } } }, async (request) =>
    passkeys.assertionOptions(userCaller(request), request.body),
  );

  app.put('/webauthn', { ...user, schema: { tags, ...docs.update, body: UpdatePasskeyBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await passkeys.updateKeySet(userCaller(request), request.body);
    return emptyOk(reply);
  });

  app.post('/webauthn/:id/delete', { ...user, schema: { tags, ...docs.remove, params: IdParams, body: SecretBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await passkeys.remove(userCaller(request), request.params.id, request.body);
    return emptyOk(reply);
  });
};

/** Logging in with a passkey: the anonymous assertion options ({auth_url}/accounts/webauthn/assertion-options). */
export const passkeyLoginRoutes: FastifyPluginAsyncTypebox<{ passkeyLogin: PasskeyLoginService }> = async (app, { passkeyLogin }) => {
  app.get('/accounts/webauthn/assertion-options', { config: { access: access.anonymous }, schema: { tags: identityTags, ...docs.loginOptions, response: { 200: AssertionOptionsResponse } } }, async (_request, reply) => {
    void reply.header('cache-control', 'no-store');
    return passkeyLogin.assertionOptions();
  });
};
