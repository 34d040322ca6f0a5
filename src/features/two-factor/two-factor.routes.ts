import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access } from '../../http/access.js';
import { BadRequest, TooManyRequests } from '../../http/errors.js';
import { anonymousCaller, userCaller } from '../../http/request-context.js';
import { olderForm, type RouteDoc } from '../../http/route-docs.js';
import { EmptyResponse, ListOf, emptyOk, list } from '../../http/schemas.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { LoginThrottle } from '../rate-limits/login-throttle.js';
import {
  AuthenticatorBody,
  AuthenticatorResponse,
  AuthenticatorUpdateResponse,
  ChangeBody,
  DisableAuthenticatorBody,
  DisableTypeBody,
  EmailLoginBody,
  EmailResponse,
  EmailSetupBody,
  EmailUpdateBody,
  EmailUpdateResponse,
  ProviderResponse,
  RecoverBody,
  RecoverResponse,
  SecretBody,
  WebAuthnChallengeResponse,
  WebAuthnDeleteBody,
  WebAuthnDeleteResponse,
  WebAuthnResponse,
  WebAuthnUpdateBody,
  WebAuthnUpdateResponse,
} from './two-factor.schemas.js';
import type { TwoFactorService } from './two-factor.service.js';
import { TwoFactorProviderType } from './two-factor-rules.js';

const tags = ['Two-step login'];

const USER = 'Access: a signed-in user, on their own account.';
const PASSWORD = 'The master password hash must be right (400 naming `masterPasswordHash` otherwise).';
const CHANGE =
  'The caller proves who they are with the `userVerificationToken` the matching get route answered (30 minutes, bound to the account, its security stamp and the provider) or, as older clients do, the master password hash; 400 "User verification failed." otherwise.';

const docs = {
  list: { summary: "The caller's two-step login providers", description: `Each provider the caller has turned on, with its type (TwoFactorProviderType) and \`enabled\`. ${USER}` },
  getAuthenticator: {
    summary: 'Read the authenticator app setup',
    description: `The authenticator key (Base32; a new random one while the provider is off, for the QR code) and a verification token for the following change. ${PASSWORD} ${USER}`,
  },
  putAuthenticator: {
    summary: 'Turn on the authenticator app',
    description: `Saves the key once \`token\` is a current code for it (RFC 6238: 30 s, 6 digits, one step either side; 400 naming \`token\` otherwise). That code cannot then log in. Records User_Updated2fa (1002). ${CHANGE} ${USER}`,
  },
  deleteAuthenticator: {
    summary: 'Turn off the authenticator app',
    description: `Removes the provider and records User_Disabled2fa (1003). With no provider left, the account's remember-device tokens end and memberships of organizations with the Two-step login policy (not as owner or admin) are revoked (OrganizationUser_Revoked_TwoFactorNonCompliance, 1520). ${CHANGE} ${USER}`,
  },
  disable: {
    summary: 'Turn off a provider by type',
    description: `Older clients' way to turn off any provider (\`type\`): as DELETE /two-factor/authenticator, answering the provider as now off. ${PASSWORD} ${USER}`,
  },
  getEmail: {
    summary: 'Read the email provider setup',
    description: `The address two-step login codes go to (null while off) and a verification token for the following changes. ${PASSWORD} ${USER}`,
  },
  sendEmail: {
    summary: 'Send an email setup code',
    description: `Mails a 6-digit code (10 minutes, 5 tries) to the address being set up; at most 5 codes per account in 10 minutes (400 past it), besides the IP rules. 502 when the mail server refuses it. ${CHANGE} ${USER}`,
  },
  putEmail: {
    summary: 'Turn on two-step login by email',
    description: `Saves the address once \`token\` is the code sent to that address (400 naming \`token\` otherwise); records User_Updated2fa (1002). ${CHANGE} ${USER}`,
  },
  deleteEmail: { summary: 'Turn off two-step login by email', description: `As DELETE /two-factor/authenticator, for the email provider. ${CHANGE} ${USER}` },
  deleteDuo: {
    summary: 'Turn off two-step login with Duo',
    description: `As DELETE /two-factor/authenticator, for the Duo provider (which this server does not set up; an account that has it, say from a restored database, can still turn it off). The verification token is one for Duo. ${CHANGE} ${USER}`,
  },
  deleteYubiKey: {
    summary: 'Turn off two-step login with YubiKey OTP',
    description: `As DELETE /two-factor/authenticator, for the YubiKey OTP provider (which this server does not set up; an account that has it can still turn it off). The verification token is one for YubiKey. ${CHANGE} ${USER}`,
  },
  deleteWebAuthnAll: {
    summary: 'Remove every security key',
    description: `Turns the WebAuthn provider off, removing every registered key, as DELETE /two-factor/authenticator does for its provider; the verification token is the one POST /two-factor/get-webauthn answered. ${CHANGE} ${USER}`,
  },
  sendEmailLogin: {
    summary: 'Send a login code by email',
    description:
      'The login page asks for a two-step code by mail: the account email with its master password hash (or an approved device request id and access code). When they are right and the email provider is on, a 6-digit code (10 minutes, 5 tries) goes to the provider address; otherwise 400 "Cannot send two-factor email." whatever was wrong, so nothing is learnt about the account. Wrong passwords count toward the login throttle (429 past it). Access: anonymous.',
  },
  getRecover: {
    summary: 'Make a new recovery code',
    description: `A new recovery code, shown this once: the server keeps only its hash, and the previous code stops working. Entered at login (provider 8) or at POST /two-factor/recover it turns every provider off. ${PASSWORD} ${USER}`,
  },
  recover: {
    summary: 'Turn two-step login off with the recovery code',
    description:
      'Older clients\' recovery form: email, master password hash and recovery code. When all are right every provider is turned off, the code is spent, User_Recovered2fa (1004) is recorded, memberships the Two-step login policy binds are revoked and the account is told by mail; otherwise 400 "Invalid information. Try again.". Wrong passwords count toward the login throttle. Access: anonymous.',
  },
  getWebAuthn: {
    summary: 'Read the security keys',
    description: `The WebAuthn (FIDO2) security keys registered as a second factor (slot id, name) and a verification token for the following changes. ${PASSWORD} ${USER}`,
  },
  getWebAuthnChallenge: {
    summary: 'Start registering a security key',
    description: `Registration options for navigator.credentials.create, for the relying party of PUBLIC_URL (its host is the RP ID); the challenge stays valid five minutes and is spent by the next PUT /two-factor/webauthn. At most five keys (400 past it). ${CHANGE} ${USER}`,
  },
  putWebAuthn: {
    summary: 'Register a security key',
    description: `Saves the key in slot \`id\` (1–5; replacing one there) once \`deviceResponse\` (the attestation, as the clients send it) answers the pending challenge from the configured origin; otherwise 400 "Unable to complete WebAuthn registration.". Turns the provider on and records User_Updated2fa (1002). ${CHANGE} ${USER}`,
  },
  deleteWebAuthn: {
    summary: 'Remove a security key',
    description: `Removes the key in slot \`id\`. The last key is never removed (400 "Unable to delete WebAuthn credential.", as for an unknown slot): turn the provider off with PUT /two-factor/disable (type 7) instead. Records User_Updated2fa (1002). ${CHANGE} ${USER}`,
  },
  notOffered: {
    summary: 'A provider this server does not offer',
    description: 'Duo and YubiKey OTP need outside services this server does not use: always 400 naming the provider, as a server without them is configured. Access: a signed-in user.',
  },
} satisfies Record<string, RouteDoc>;

/** `/two-factor/*`: two-step login providers (two-factor.service.ts). */
export const twoFactorRoutes: FastifyPluginAsyncTypebox<{
  twoFactor: TwoFactorService;
  throttle: LoginThrottle;
  authRequestValid: (userId: string, id: string, code: string) => Promise<boolean>;
}> = async (app, { twoFactor, throttle, authRequestValid }) => {
  const user = { config: { access: access.user } };
  const anonymous = { config: { access: access.anonymous } };
  const secretOf = (body: { masterPasswordHash?: string | null; secret?: string | null; otp?: string | null }) => ({
    masterPasswordHash: body.masterPasswordHash ?? body.secret ?? null,
    otp: body.otp ?? null,
  });

  /** Anonymous routes that check a master password take a login attempt, as the token endpoint does. */
  async function guarded<T>(email: string, ip: string | null, run: () => Promise<T | false>, failure: string): Promise<T> {
    const attempt = await throttle.attempt(normalizeEmail(email), ip);
    if (!attempt.allowed) throw new TooManyRequests(`Too many failed attempts. Try again in ${attempt.retryAfterSeconds} seconds.`, attempt.retryAfterSeconds);
    const result = await run();
    if (result === false) throw new BadRequest(failure);
    await attempt.released();
    return result;
  }

  app.get('/two-factor', { ...user, schema: { tags, ...docs.list, response: { 200: ListOf(ProviderResponse) } } }, async (request) =>
    list(await twoFactor.list(userCaller(request))),
  );

  app.post('/two-factor/get-authenticator', { ...user, schema: { tags, ...docs.getAuthenticator, body: SecretBody, response: { 200: AuthenticatorResponse } } }, async (request) =>
    twoFactor.getAuthenticator(userCaller(request), secretOf(request.body)),
  );

  for (const [method, doc] of [
    ['put', docs.putAuthenticator],
    ['post', olderForm(docs.putAuthenticator, 'PUT /two-factor/authenticator')],
  ] as const) {
    app[method]('/two-factor/authenticator', { ...user, schema: { tags, ...doc, body: AuthenticatorBody, response: { 200: AuthenticatorUpdateResponse } } }, async (request) => {
      const body = request.body;
      const change = { ...secretOf(body), userVerificationToken: body.userVerificationToken ?? null, key: body.key, token: body.token };
      return twoFactor.putAuthenticator(userCaller(request), change);
    });
  }

  app.delete(
    '/two-factor/authenticator',
    { ...user, schema: { tags, ...docs.deleteAuthenticator, body: DisableAuthenticatorBody, response: { 204: EmptyResponse } } },
    async (request, reply) => {
      const body = request.body;
      await twoFactor.disableAuthenticator(userCaller(request), { ...secretOf(body), userVerificationToken: body.userVerificationToken ?? null, key: body.key ?? null });
      return reply.code(204).send(null);
    },
  );

  for (const [method, doc] of [
    ['put', docs.disable],
    ['post', olderForm(docs.disable, 'PUT /two-factor/disable')],
  ] as const) {
    app[method]('/two-factor/disable', { ...user, schema: { tags, ...doc, body: DisableTypeBody, response: { 200: ProviderResponse } } }, async (request) =>
      twoFactor.disableType(userCaller(request), { ...secretOf(request.body), type: request.body.type }),
    );
  }

  app.post('/two-factor/get-email', { ...user, schema: { tags, ...docs.getEmail, body: SecretBody, response: { 200: EmailResponse } } }, async (request) =>
    twoFactor.getEmail(userCaller(request), secretOf(request.body)),
  );

  app.post('/two-factor/send-email', { ...user, schema: { tags, ...docs.sendEmail, body: EmailSetupBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    const body = request.body;
    await twoFactor.sendEmailSetup(userCaller(request), { ...secretOf(body), userVerificationToken: body.userVerificationToken ?? null, email: body.email });
    return emptyOk(reply);
  });

  for (const [method, doc] of [
    ['put', docs.putEmail],
    ['post', olderForm(docs.putEmail, 'PUT /two-factor/email')],
  ] as const) {
    app[method]('/two-factor/email', { ...user, schema: { tags, ...doc, body: EmailUpdateBody, response: { 200: EmailUpdateResponse } } }, async (request) => {
      const body = request.body;
      const change = { ...secretOf(body), userVerificationToken: body.userVerificationToken ?? null, email: body.email, token: body.token };
      return twoFactor.putEmail(userCaller(request), change);
    });
  }

  // Current clients turn a provider off by its own route; DELETE /two-factor/webauthn/all removes every security key.
  for (const [path, type, doc] of [
    ['email', TwoFactorProviderType.Email, docs.deleteEmail],
    ['duo', TwoFactorProviderType.Duo, docs.deleteDuo],
    ['yubikey', TwoFactorProviderType.YubiKey, docs.deleteYubiKey],
    ['webauthn/all', TwoFactorProviderType.WebAuthn, docs.deleteWebAuthnAll],
  ] as const) {
    app.delete(`/two-factor/${path}`, { ...user, schema: { tags, ...doc, body: ChangeBody, response: { 204: EmptyResponse } } }, async (request, reply) => {
      const body = request.body;
      await twoFactor.disableProvider(userCaller(request), type, { ...secretOf(body), userVerificationToken: body.userVerificationToken ?? null });
      return reply.code(204).send(null);
    });
  }

  app.post('/two-factor/send-email-login', { ...anonymous, schema: { tags, ...docs.sendEmailLogin, body: EmailLoginBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    const body = request.body;
    await guarded(
      body.email,
      request.ip ?? null,
      () =>
        twoFactor.sendEmailLogin(
          anonymousCaller(request),
          {
            email: body.email,
            masterPasswordHash: body.masterPasswordHash ?? body.secret ?? null,
            authRequestId: body.authRequestId ?? null,
            authRequestAccessCode: body.authRequestAccessCode ?? null,
          },
          authRequestValid,
        ),
      'Cannot send two-factor email.',
    );
    return emptyOk(reply);
  });

  app.post('/two-factor/get-recover', { ...user, schema: { tags, ...docs.getRecover, body: SecretBody, response: { 200: RecoverResponse } } }, async (request) =>
    twoFactor.getRecover(userCaller(request), secretOf(request.body)),
  );

  app.post('/two-factor/recover', { ...anonymous, schema: { tags, ...docs.recover, body: RecoverBody, response: { 200: EmptyResponse } } }, async (request, reply) => {
    const body = request.body;
    await guarded(body.email, request.ip ?? null, () => twoFactor.recoverByCode(anonymousCaller(request), body), 'Invalid information. Try again.');
    return emptyOk(reply);
  });

  app.post('/two-factor/get-webauthn', { ...user, schema: { tags, ...docs.getWebAuthn, body: SecretBody, response: { 200: WebAuthnResponse } } }, async (request) =>
    twoFactor.getWebAuthn(userCaller(request), secretOf(request.body)),
  );

  app.post(
    '/two-factor/get-webauthn-challenge',
    { ...user, schema: { tags, ...docs.getWebAuthnChallenge, body: ChangeBody, response: { 200: WebAuthnChallengeResponse } } },
    async (request) => {
      const body = request.body;
      return twoFactor.webAuthnChallenge(userCaller(request), { ...secretOf(body), userVerificationToken: body.userVerificationToken ?? null });
    },
  );

  for (const [method, doc] of [
    ['put', docs.putWebAuthn],
    ['post', olderForm(docs.putWebAuthn, 'PUT /two-factor/webauthn')],
  ] as const) {
    app[method]('/two-factor/webauthn', { ...user, schema: { tags, ...doc, body: WebAuthnUpdateBody, response: { 200: WebAuthnUpdateResponse } } }, async (request) => {
      const body = request.body;
      const change = { ...secretOf(body), userVerificationToken: body.userVerificationToken ?? null, id: body.id, name: body.name ?? '', deviceResponse: body.deviceResponse };
      return twoFactor.putWebAuthn(userCaller(request), change);
    });
  }

  app.delete('/two-factor/webauthn', { ...user, schema: { tags, ...docs.deleteWebAuthn, body: WebAuthnDeleteBody, response: { 200: WebAuthnDeleteResponse } } }, async (request) => {
    const body = request.body;
    const change = { ...secretOf(body), userVerificationToken: body.userVerificationToken ?? null, id: body.id };
    return twoFactor.deleteWebAuthn(userCaller(request), change);
  });

  // Duo and YubiKey OTP call outside services (Duo's API, YubiCloud) that cannot be tested here.
  for (const [path, name] of [
    ['get-duo', 'Duo'],
    ['duo', 'Duo'],
    ['get-yubikey', 'YubiKey OTP'],
    ['yubikey', 'YubiKey OTP'],
  ] as const) {
    const method = path.startsWith('get-') ? 'post' : 'put';
    app[method](`/two-factor/${path}`, { ...user, schema: { tags, ...docs.notOffered, body: Type.Object({}, { additionalProperties: true }), response: { 200: EmptyResponse } } }, async () => {
      throw BadRequest.field('type', `${name} two-step login is not offered by this server.`);
    });
  }
};
