import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { anonymousCaller, userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { emptyOk, EmptyResponse, IdParams, normalizeGuid } from '../../http/schemas.js';
import {
  ApiKeyResponse,
  AvatarBody,
  DeleteRecoverBody,
  KdfChangeBody,
  KeysBody,
  KeysResponse,
  PasswordChangeBody,
  ProfileBody,
  ProfileResponse,
  RegisterBody,
  RegisterResponse,
  SecretVerificationBody,
  UserKeyIdBody,
  UserPublicKeyResponse,
  VerifyDeleteRecoverBody,
  VerifyDevicesBody,
} from './accounts.schemas.js';
import type { AccountService } from './accounts.service.js';

const tags = ['Accounts'];

const USER = 'Access: any signed-in user (`user`).';

const docs = {
  register: {
    summary: 'Register an account',
    description:
      "The interface spec's registration path on the API service: creates an account from the older registration body (master password hash, key, key pair, KDF settings defaulting to PBKDF2 600,000); current clients call the identity service's `/accounts/register/finish`. While open registration is disabled, refused unless the body carries an organization invitation (`token` and `organizationUserId`). Access: anonymous.",
  },
  profile: {
    summary: 'Read the profile',
    description: `Answers the caller's profile: name, email, culture, keys, security stamp, avatar colour and their confirmed organizations. ${USER}`,
  },
  updateProfile: {
    summary: 'Update the profile',
    description: `Changes the caller's name, culture, master password hint or avatar colour (fields left out stay) and answers the profile. ${USER}`,
  },
  avatar: {
    summary: 'Change the avatar colour',
    description: `Sets the caller's avatar colour (\`#rrggbb\`, or null for the default), answers the profile and tells the caller's other apps to sync their settings (SyncSettings push). ${USER}`,
  },
  revisionDate: {
    summary: 'Read the account revision date',
    description: `Answers, as a bare JSON number of milliseconds, when the caller's account or vault last changed; clients sync when it moves. ${USER}`,
  },
  keys: {
    summary: 'Read the account keys',
    description: `Answers the caller's master-key-wrapped user key and key pair. ${USER}`,
  },
  setKeys: {
    summary: 'Set the account key pair',
    description: `Stores the caller's public key and encrypted private key once, or with \`accountKeys\` a whole set of version-2 keys and the user key's id (docs/account-keys.md): sending the same pair again is no change, a different one is refused (400) because everything shared with the old one would become unreadable. ${USER}`,
  },
  password: {
    summary: 'Change the master password',
    description: `Checks the current master password hash, then stores the new password as the 2026 clients send it (\`authenticationData\` and \`unlockData\`, whose salt and KDF must agree with each other and with the account's) or as older clients do (\`newMasterPasswordHash\` and \`key\`); rotates the security stamp (ending every access and refresh token), records the User_ChangedPassword event (1001) and tells the other devices to log out. Refused with 400 naming the field when the master password hash is wrong, the salt or KDF does not agree, or neither form is complete (a lone object beside the older fields is not read, as on the official server). ${USER}`,
  },
  kdf: {
    summary: 'Change the KDF settings',
    description: `Checks the current master password hash, then stores the KDF settings of \`authenticationData\` and \`unlockData\` (both required, with equal KDF settings and the account's unchanged salt; PBKDF2 600,000–2,000,000 iterations, or Argon2id 2–10 iterations, 15–1024 MiB, parallelism 1–16) with the new hash and re-wrapped user key; rotates the security stamp, records Strongroom's User_ChangedKdf event (9000) and tells every device to log out. Prelogin then answers the new settings. Refused with 400 naming the field otherwise. ${USER}`,
  },
  deleteRecover: {
    summary: 'Ask for an account deletion link by mail',
    description:
      "Mails a link to the web vault's verify-recover-delete page to the account with this email; the link works for one hour and until the account's security stamp changes. Always answers 200, whether or not an account has the address, so it tells nobody who has an account; without SMTP the mail, link included, is logged for the operator. Access: anonymous.",
  },
  deleteRecoverToken: {
    summary: 'Delete an account from a mailed link',
    description:
      'Deletes the account named by `userId` when `token` is the one its deletion mail carried, with its items, Sends, files and memberships, and records User_Deleted (9002). Refused with 400 on `token` for an unknown account or a forged, expired or voided token, and with 400 when the account is the sole owner of an organization. Access: anonymous.',
  },
  securityStamp: {
    summary: 'Log out of all sessions',
    description: `Rotates the caller's security stamp after checking the master password hash, so that every access and refresh token issued so far stops working. Refused with 400 when the master password hash is wrong. ${USER}`,
  },
  verifyDevices: {
    summary: 'Turn new-device login protection on or off',
    description: `Settings > My account > "Turn off new-device login protection": after checking the master password hash, sets whether a login from a new device by an account without two-step login needs a code mailed to it (\`verifyDevices\`, also in the profile). Refused with 400 when the master password hash is wrong or \`verifyDevices\` is missing. ${USER}`,
  },
  apiKey: {
    summary: 'Read the personal API key',
    description: `Answers the caller's personal API key (the client secret of \`bw login --apikey\` with client id \`user.<id>\`) after checking the master password hash. Refused with 400 when the master password hash is wrong. ${USER}`,
  },
  rotateApiKey: {
    summary: 'Rotate the personal API key',
    description: `Replaces the caller's personal API key with a new random one after checking the master password hash and answers it; the old key stops working for new logins. Refused with 400 when the master password hash is wrong. ${USER}`,
  },
  delete: {
    summary: 'Delete the account',
    description: `Deletes the caller's account with their folders, personal items, Sends, files and memberships after checking the master password hash, and records User_Deleted (9002); their tokens stop working. Refused with 400 when the master password hash is wrong or the caller is the sole owner of an organization. ${USER}`,
  },
  userKeyId: {
    summary: 'Record the user key id',
    description: `Stores the id of the caller's user key, which the token response then reports. The 2026 CLI posts it after login and fails the login when this route is missing. ${USER}`,
  },
  publicKey: {
    summary: "Read a user's public key",
    description: `Answers the public key of any account by user id (404 for an unknown one), which admins encrypt the organization key to when confirming a member. ${USER}`,
  },
} satisfies Record<string, RouteDoc>;

/** The account routes of the API service ({base_url}/accounts/...). */
export const accountRoutes: FastifyPluginAsyncTypebox<{ accounts: AccountService }> = async (app, { accounts }) => {
  const user = { config: { access: access.user } };

  // The spec's registration path; current clients use /identity/accounts/register/finish.
  app.post(
    '/accounts/register',
    { config: { access: access.anonymous }, schema: { tags, ...docs.register, body: RegisterBody, response: { 200: RegisterResponse } } },
    async (request) => {
      await accounts.registerLegacy(request.body);
      return { object: 'registerFinish' as const, captchaBypassToken: null };
    },
  );

  app.get('/accounts/profile', { ...user, schema: { tags, ...docs.profile, response: { 200: ProfileResponse } } }, async (request) => accounts.profile(userCaller(request)));

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/accounts/profile',
      ...user,
      schema: { tags, ...(method === 'PUT' ? docs.updateProfile : olderForm(docs.updateProfile, 'PUT /accounts/profile')), body: ProfileBody, response: { 200: ProfileResponse } },
      handler: async (request) => accounts.updateProfile(userCaller(request), request.body),
    });
  }

  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/accounts/avatar',
      ...user,
      schema: { tags, ...(method === 'PUT' ? docs.avatar : olderForm(docs.avatar, 'PUT /accounts/avatar')), body: AvatarBody, response: { 200: ProfileResponse } },
      handler: async (request) => accounts.updateAvatar(userCaller(request), request.body.avatarColor),
    });
  }

  // A bare JSON number (milliseconds); a negative one would make the CLI log out.
  app.get('/accounts/revision-date', { ...user, schema: { tags, ...docs.revisionDate, response: { 200: Type.Number() } } }, async (request) =>
    accounts.revisionDate(userCaller(request)),
  );

  app.get('/accounts/keys', { ...user, schema: { tags, ...docs.keys, response: { 200: KeysResponse } } }, async (request) =>
    accounts.keys(userCaller(request)),
  );

  app.post('/accounts/keys', { ...user, schema: { tags, ...docs.setKeys, body: KeysBody, response: { 200: KeysResponse } } }, async (request) =>
    accounts.setKeys(userCaller(request), request.body),
  );

  app.post('/accounts/password', { ...user, schema: { tags, ...docs.password, body: PasswordChangeBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accounts.changePassword(userCaller(request), request.body);
    return emptyOk(reply);
  });

  app.post('/accounts/kdf', { ...user, schema: { tags, ...docs.kdf, body: KdfChangeBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accounts.changeKdf(userCaller(request), request.body);
    return emptyOk(reply);
  });

  const anonymous = { config: { access: access.anonymous } };
  // As the official server names them: delete-recover mails the link, delete-recover-token follows it.
  app.post('/accounts/delete-recover', { ...anonymous, schema: { tags, ...docs.deleteRecover, body: DeleteRecoverBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accounts.mailDeleteLink(anonymousCaller(request), request.body.email);
    return emptyOk(reply);
  });

  app.post(
    '/accounts/delete-recover-token',
    { ...anonymous, schema: { tags, ...docs.deleteRecoverToken, body: VerifyDeleteRecoverBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await accounts.deleteByMailedLink(anonymousCaller(request), normalizeGuid(request.body.userId), request.body.token);
      return emptyOk(reply);
    },
  );

  app.post('/accounts/security-stamp', { ...user, schema: { tags, ...docs.securityStamp, body: SecretVerificationBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    await accounts.rotateSecurityStamp(userCaller(request), request.body);
    return emptyOk(reply);
  });

  // The web vault sends POST, which the official server keeps as an obsolete alias of PUT.
  for (const method of ['PUT', 'POST'] as const) {
    app.route({
      method,
      url: '/accounts/verify-devices',
      ...user,
      schema: { tags, ...docs.verifyDevices, body: VerifyDevicesBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await accounts.setVerifyDevices(userCaller(request), request.body, request.body.verifyDevices);
        return emptyOk(reply);
      },
    });
  }

  for (const [url, rotate] of [
    ['/accounts/api-key', false],
    ['/accounts/rotate-api-key', true],
  ] as const) {
    app.post(url, { ...user, schema: { tags, ...(rotate ? docs.rotateApiKey : docs.apiKey), body: SecretVerificationBody, response: { 200: ApiKeyResponse } } }, async (request) =>
      accounts.apiKey(userCaller(request), request.body, rotate),
    );
  }

  for (const [method, url] of [
    ['DELETE', '/accounts'],
    ['POST', '/accounts/delete'],
  ] as const) {
    app.route({
      method,
      url,
      ...user,
      schema: { tags, ...(method === 'DELETE' ? docs.delete : olderForm(docs.delete, 'DELETE /accounts')), body: SecretVerificationBody, response: { 200: EmptyResponse } },
      handler: async (request, reply) => {
        await accounts.deleteAccount(userCaller(request), request.body);
        return emptyOk(reply);
      },
    });
  }

  // The 2026 CLI posts its user key id after login and fails the login when this is missing.
  app.post(
    '/accounts/key-management/user-key-id',
    { ...user, schema: { tags, ...docs.userKeyId, body: UserKeyIdBody, response: { 200: EmptyResponse } } },
    async (request, reply) => {
      await accounts.setUserKeyId(userCaller(request), request.body.userKeyId);
      return emptyOk(reply);
    },
  );

  app.get('/users/:id/public-key', { ...user, schema: { tags, ...docs.publicKey, params: IdParams, response: { 200: UserPublicKeyResponse } } }, async (request) =>
    accounts.publicKey(userCaller(request), normalizeGuid(request.params.id)),
  );
};
