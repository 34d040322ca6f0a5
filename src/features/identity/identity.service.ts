import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { OAuthError } from '../../http/error-handler.js';
import { isGuid } from '../../http/ids.js';
import type { AnonymousCaller, ClientContext } from '../../http/request-context.js';
import type { MailLog } from '../mail/mailer.js';
import { safeEqual } from '../../shared/constant-time.js';
import {
  findDevice,
  findUserByEmail,
  findUserById,
  insertDevice,
  updateDevice,
  type DeviceRow,
  type UserRow,
} from '../../platform/auth/users.repository.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { usablePushToken } from '../../platform/push/push-token.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { masterPasswordPolicyFor } from '../policies/policies.service.js';
import type { AuthRequestService } from '../auth-requests/auth-requests.service.js';
import type { TwoFactorLogin } from '../two-factor/two-factor-login.service.js';
import { TwoFactorProviderType } from '../two-factor/two-factor-rules.js';
import type { AccountEmails } from '../account-emails/account-emails.service.js';
import { NO_DEVICE_KEYS } from '../devices/device-trust.schemas.js';
import { parseDeviceType } from '../devices/device-types.js';
import { LimitsUnavailable } from '../rate-limits/failover-store.js';
import type { LoginAttempt, LoginThrottle } from '../rate-limits/login-throttle.js';
import type { Instruments } from '../operations/metrics.js';
import type { TokenService } from '../../platform/auth/tokens.js';
import type { PasskeyLoginService } from '../passkey-login/passkey-login.service.js';
import { requireClientForKeys } from './client-version.js';
import { createTokenResponses, type DecryptionOptions } from './token-response.js';
import type { PushRegistrations } from '../../platform/push/push-registrations.js';

/** The official first-party clients; none has a secret. */
export const STATIC_CLIENTS = new Set(['web', 'browser', 'desktop', 'cli', 'mobile', 'connector']);

const INVALID_PASSWORD = 'Username or password is incorrect. Try again.';
const DISABLED = 'This account has been disabled. Contact your administrator.';
const TWO_FACTOR_REQUIRED = 'Two factor required.';
const INVALID_TWO_FACTOR = 'Two-step token is invalid. Try again.';
const SSO_REQUIRED = 'SSO authentication is required.';

/** Form keys are matched case-insensitively, as the official server does. */
export type TokenForm = Record<string, string>;

/** The device a user login names: its fields, and the push token a mobile app sends with it. */
interface LoginDevice {
  type: number;
  identifier: string;
  name: string;
  pushToken?: string | null;
}

export function normalizeForm(body: unknown): TokenForm {
  const form: TokenForm = {};
  if (body && typeof body === 'object') {
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      const text: unknown = Array.isArray(value) ? (value as unknown[])[0] : value;
      if (typeof text === 'string') form[key.toLowerCase()] = text;
    }
  }
  return form;
}

function required(form: TokenForm, name: string): string {
  const value = form[name.toLowerCase()];
  if (!value) throw new OAuthError('invalid_request', `${name} is required.`);
  return value;
}

/** A single sign-on code checked (not yet spent): whose login it is, and the one spend of it. */
export interface SsoRedemption {
  user: UserRow;
  organizationId: string;
  /** Marks the code used; false when another request spent it first. */
  spend: () => Promise<boolean>;
}

/** A `client_credentials` grant for the client ids it accepts (personal and organization API keys, machine accounts). */
export interface ClientCredentialsGrant {
  accepts(clientId: string): boolean;
  grant(form: TokenForm, client: ClientContext): Promise<Record<string, unknown>>;
}

export function createIdentityService(deps: {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  audit: AuditLog;
  tokens: TokenService;
  throttle: LoginThrottle;
  /** Log in with a device: the password grant with `AuthRequest` (the request id) and the access code as password. */
  authRequests: Pick<AuthRequestService, 'validForLogin' | 'markUsed'>;
  clientCredentialGrants?: readonly ClientCredentialsGrant[];
  /** Two-step login: the challenge and the second factor of password logins. */
  twoFactor?: Pick<TwoFactorLogin, 'isEnabled' | 'challenge' | 'verifyLogin' | 'issueRememberToken'>;
  /** Account mail around password logins: verified-email and new-device checks, the new-device notice. */
  loginChecks?: Pick<AccountEmails, 'beforeLogin' | 'afterLogin'>;
  /** Counts refused logins (the metrics). */
  instruments?: Pick<Instruments, 'loginFailed'>;
  /** Log in with a passkey (`grant_type=webauthn`): verifies the assertion; the login itself is this service's. */
  passkeyLogin?: Pick<PasskeyLoginService, 'verify'>;
  /** Grant types beyond the OAuth ones, by name (`send_access`: sends/send-access.ts). */
  extensionGrants?: Record<string, (caller: AnonymousCaller, form: TokenForm) => Promise<Record<string, unknown>>>;
  /** Ways to unlock beyond the master password, in every user token answer (trusted devices). */
  decryptionOptions?: DecryptionOptions;
  /**
   * Whether an organization's Require single sign-on policy binds this user: then a password or
   * passkey login is refused, and only a login through the organization's SSO is let in.
   */
  ssoRequired?: (user: UserRow) => Promise<boolean>;
  /**
   * The organization identifier a refused login names (`SsoOrganizationIdentifier`), so clients
   * can go straight to that organization's SSO; null when it cannot be told.
   */
  ssoOrganizationIdentifier?: (user: UserRow) => Promise<string | null>;
  /**
   * `grant_type=authorization_code`: redeems the code a single sign-on login ended with (its
   * PKCE verifier, client and redirect) for the account it logged in; the login itself is this service's.
   */
  ssoLogin?: { redeem: (form: TokenForm, client: ClientContext) => Promise<SsoRedemption> };
  /** The mobile push relay: a new device that logs in with its push token is registered there. */
  registrations?: Pick<PushRegistrations, 'deviceTokenSet'>;
}) {
  const { db, clock } = deps;
  const userTokenResponse = createTokenResponses({ db, decryptionOptions: deps.decryptionOptions });

  /** The device fields every user login must carry. */
  function deviceOf(form: TokenForm): LoginDevice {
    const type = form.devicetype ? parseDeviceType(form.devicetype) : undefined;
    const identifier = form.deviceidentifier;
    const name = form.devicename;
    if (type === undefined || !identifier || !name) {
      throw new OAuthError('device_error', 'No device information provided', 'no device information provided');
    }
    // The mobile apps send their push token with the login (`DevicePushToken`); one that is not a
    // token is ignored, as an absent one (the token routes refuse it with a 400).
    return { type, identifier: identifier.slice(0, 50), name: name.slice(0, 50), pushToken: usablePushToken(form.devicepushtoken) };
  }

  /** The device row (`existing`: the account's row for this device, if any), made on its first login (`created`). */
  async function registerDevice(user: UserRow, device: LoginDevice, existing: DeviceRow | undefined): Promise<DeviceRow & { created?: boolean }> {
    const now = clock.now().toISOString();
    if (existing) {
      // A removed (deactivated) device that logs in again is back in the account's list, untrusted:
      // whatever keys it holds date from before its removal and are dropped.
      const changes = { type: device.type, name: device.name, revision_date: now, active: true, ...(existing.active ? {} : NO_DEVICE_KEYS) };
      await updateDevice(db, existing.id, changes);
      return { ...existing, ...changes };
    }
    const row: DeviceRow = {
      id: randomUUID(),
      user_id: user.id,
      type: device.type,
      identifier: device.identifier,
      name: device.name,
      // As officially, a login stores the push token of a new device only; a known device's
      // token changes through PUT /devices/identifier/{identifier}/token.
      push_token: device.pushToken ?? null,
      creation_date: now,
      revision_date: now,
      encrypted_user_key: null,
      encrypted_public_key: null,
      encrypted_private_key: null,
      active: true,
    };
    try {
      await insertDevice(db, row);
      if (row.push_token) deps.registrations?.deviceTokenSet(row.id, row.user_id);
      return { ...row, created: true };
    } catch (error) {
      // Two logins from one new device at once: the other one registered it.
      const raced = await findDevice(db, user.id, device.identifier);
      if (raced) return raced;
      throw error;
    }
  }

  /** Refuses a client too old for the account's keys, as a failed login (User_FailedLogIn), as the official server does. */
  async function clientFitsKeys(user: UserRow, context: ClientContext, proven?: () => Promise<void>): Promise<void> {
    try {
      requireClientForKeys(user, context.clientVersion);
    } catch (error) {
      // The password was right: like a disabled account's, the refusal does not count toward the throttle.
      await proven?.();
      await deps.audit.record(db, context, { type: EventType.User_FailedLogIn, userId: user.id, actingUserId: user.id });
      throw error;
    }
  }

  /** Refuses a password or passkey login that an organization's Require single sign-on policy covers, once the credentials are proven. */
  async function requireNoSso(user: UserRow, context: ClientContext, proven?: () => Promise<void>): Promise<void> {
    if (!deps.ssoRequired || !(await deps.ssoRequired(user))) return;
    await proven?.();
    await deps.audit.record(db, context, { type: EventType.User_FailedLogIn, userId: user.id, actingUserId: user.id });
    deps.instruments?.loginFailed('sso-required');
    const identifier = (await deps.ssoOrganizationIdentifier?.(user)) ?? null;
    throw new OAuthError('invalid_grant', SSO_REQUIRED, SSO_REQUIRED, 400, identifier ? { SsoOrganizationIdentifier: identifier } : {});
  }

  /** The client and scopes of a user login by one of the official first-party clients. */
  function firstPartyClient(form: TokenForm): { clientId: string; scopes: string[] } {
    const clientId = required(form, 'client_id');
    if (!STATIC_CLIENTS.has(clientId)) throw new OAuthError('invalid_client', 'Unknown client.');
    const scopes = (form.scope ?? 'api').split(' ').filter(Boolean);
    if (!scopes.includes('api') || scopes.some((s) => s !== 'api' && s !== 'offline_access')) {
      throw new OAuthError('invalid_scope', 'The requested scope is not allowed for this client.');
    }
    return { clientId, scopes };
  }

  /** Refuses a login to an account an operator disabled, as a failed login. */
  async function refuseDisabled(user: UserRow, context: ClientContext): Promise<void> {
    if (!user.disabled) return;
    await deps.audit.record(db, context, { type: EventType.User_FailedLogIn, userId: user.id, actingUserId: user.id });
    deps.instruments?.loginFailed('disabled');
    throw new OAuthError('invalid_grant', DISABLED);
  }

  /** A login attempt the throttle allows, or its 429 with the wait. */
  async function allowedLoginAttempt(email: string, ip: string | null): Promise<LoginAttempt & { allowed: true }> {
    const attempt = await takeLoginAttempt(email, ip);
    if (!attempt.allowed) {
      const wait = attempt.retryAfterSeconds;
      const message = `Too many failed login attempts. Try again in ${wait} seconds.`;
      deps.instruments?.loginFailed('throttled');
      throw new OAuthError('invalid_grant', message, message, 429, {}, wait);
    }
    return attempt;
  }

  /** The throttle's verdict; in closed mode, while the shared store is out of use, a 503 the clients retry. */
  async function takeLoginAttempt(email: string, ip: string | null): Promise<LoginAttempt> {
    try {
      return await deps.throttle.attempt(email, ip);
    } catch (error) {
      if (!(error instanceof LimitsUnavailable)) throw error;
      throw new OAuthError('temporarily_unavailable', error.message, error.message, 503, {}, error.retryAfterSeconds);
    }
  }

  /**
   * The second step of a password login, when the user has a provider on: without
   * TwoFactorToken/TwoFactorProvider (or with an expired remember token) the official challenge;
   * a wrong code is a failed login (User_FailedLogIn2fa) that counts toward the throttle.
   * Answers whether a second factor was asked for and whether to issue a remember token.
   */
  async function secondStep(
    user: UserRow,
    form: TokenForm,
    context: ClientContext,
    attempt: LoginAttempt & { allowed: true },
    /** The account's row for the logging-in device, if it has one (a remember token is bound to it). */
    known: DeviceRow | undefined,
    log: MailLog,
  ): Promise<{ required: boolean; remember: boolean }> {
    const twoFactor = deps.twoFactor;
    if (!twoFactor || !(await twoFactor.isEnabled(user.id))) return { required: false, remember: false };
    // The challenge is made only when answered: WebAuthn's replaces the pending assertion challenge.
    const challengeError = async () => {
      await attempt.released();
      const challenge = await twoFactor.challenge(user);
      return new OAuthError('invalid_grant', TWO_FACTOR_REQUIRED, TWO_FACTOR_REQUIRED, 400, { ...challenge, MasterPasswordPolicy: await masterPasswordPolicyFor(db, user.id) });
    };
    const token = form.twofactortoken?.trim();
    const providerText = form.twofactorprovider;
    if (!token || !providerText || !/^\d{1,3}$/.test(providerText)) throw await challengeError();
    const provider = Number(providerText);
    if (!(await twoFactor.verifyLogin(user, provider, token, known?.id ?? null, context, log))) {
      // An expired or revoked remember token is not a failure: the client asks for a code.
      if (provider === (TwoFactorProviderType.Remember as number)) throw await challengeError();
      await deps.audit.record(db, context, { type: EventType.User_FailedLogIn2fa, userId: user.id, actingUserId: user.id });
      deps.instruments?.loginFailed('two-factor');
      throw new OAuthError('invalid_grant', 'invalid_username_or_password', INVALID_TWO_FACTOR);
    }
    return { required: true, remember: form.twofactorremember === '1' && provider !== (TwoFactorProviderType.Remember as number) };
  }

  async function passwordGrant(form: TokenForm, client: ClientContext, log: MailLog): Promise<Record<string, unknown>> {
    const { clientId, scopes } = firstPartyClient(form);
    const email = normalizeEmail(required(form, 'username'));
    const password = required(form, 'password');
    const device = deviceOf(form);
    const context = { ...client, deviceType: device.type };

    const attempt = await allowedLoginAttempt(email, client.ipAddress);
    // The attempt stays taken (a failure) unless the password turns out right.
    const user = await findUserByEmail(db, email);
    // Logging in with an approved device request: its access code stands for the password.
    const authRequestId = form.authrequest;
    const valid = authRequestId
      ? Boolean(user) && (await deps.authRequests.validForLogin(user?.id ?? '', authRequestId, password))
      : await deps.hasher.verify(password, user?.master_password_hash ?? null);
    if (!valid || !user) {
      if (user) await deps.audit.record(db, context, { type: EventType.User_FailedLogIn, userId: user.id, actingUserId: user.id });
      deps.instruments?.loginFailed('password');
      throw new OAuthError('invalid_grant', 'invalid_username_or_password', INVALID_PASSWORD);
    }
    // Checked after the password, so only the account's owner learns that it is disabled.
    if (user.disabled) await attempt.succeeded();
    await refuseDisabled(user, context);
    await clientFitsKeys(user, context, () => attempt.succeeded());
    await requireNoSso(user, context, () => attempt.succeeded());
    // The account's row for this device, if it has logged in before: read once for every step below.
    const known = await findDevice(db, user.id, device.identifier);
    const second = await secondStep(user, form, context, attempt, known, log);
    await attempt.succeeded();
    await deps.loginChecks?.beforeLogin(user, form, Boolean(known), second.required, log);
    // A request logs in once: a second login racing this one with the same request loses.
    if (authRequestId && !(await deps.authRequests.markUsed(authRequestId))) {
      throw new OAuthError('invalid_grant', 'invalid_username_or_password', INVALID_PASSWORD);
    }
    const deviceRow = await registerDevice(user, device, known);
    const tokens = await deps.tokens.issueUserTokens({
      user,
      device: deviceRow,
      clientId,
      scopes,
      withRefreshToken: scopes.includes('offline_access'),
    });
    await deps.audit.record(db, context, { type: EventType.User_LoggedIn, userId: user.id, actingUserId: user.id });
    const rememberToken = second.remember && deps.twoFactor ? await deps.twoFactor.issueRememberToken(user, deviceRow.id) : null;
    await deps.loginChecks?.afterLogin(user, device, Boolean(deviceRow.created), context, log);
    return userTokenResponse({ user, device: deviceRow }, tokens, scopes.join(' '), rememberToken ? { TwoFactorToken: rememberToken } : {});
  }

  /**
   * `grant_type=webauthn`: a passkey stands for the password and, as officially, for the second
   * factor too (its user verification is one), so neither two-step login nor new-device
   * verification is asked; the rest is a password login's.
   */
  async function passkeyGrant(verifier: Pick<PasskeyLoginService, 'verify'>, form: TokenForm, client: ClientContext, log: MailLog): Promise<Record<string, unknown>> {
    const { clientId, scopes } = firstPartyClient(form);
    const device = deviceOf(form);
    const context = { ...client, deviceType: device.type };
    const { user, prfOption } = await verifier.verify(form);
    await refuseDisabled(user, context);
    // The official BaseRequestValidator holds every grant to the client version once the account
    // is proven: a passkey unlocks the same keys a password does.
    await clientFitsKeys(user, context);
    await requireNoSso(user, context);
    const known = await findDevice(db, user.id, device.identifier);
    await deps.loginChecks?.beforeLogin(user, form, Boolean(known), true, log);
    const deviceRow = await registerDevice(user, device, known);
    const tokens = await deps.tokens.issueUserTokens({ user, device: deviceRow, clientId, scopes, withRefreshToken: scopes.includes('offline_access') });
    await deps.audit.record(db, context, { type: EventType.User_LoggedIn, userId: user.id, actingUserId: user.id });
    await deps.loginChecks?.afterLogin(user, device, Boolean(deviceRow.created), context, log);
    return userTokenResponse({ user, device: deviceRow }, tokens, scopes.join(' '), {}, prfOption ? { WebAuthnPrfOption: prfOption } : {});
  }

  /**
   * `grant_type=authorization_code`: the end of a single sign-on login, the code standing for the
   * identity provider's word on who this is. Two-step login still applies; the code stays good for
   * the retry that carries the second factor and is spent only when tokens are issued. The
   * provider has verified the person, so the new-device email check is not asked.
   */
  async function ssoGrant(sso: NonNullable<typeof deps.ssoLogin>, form: TokenForm, client: ClientContext, log: MailLog): Promise<Record<string, unknown>> {
    const { clientId, scopes } = firstPartyClient(form);
    const device = deviceOf(form);
    const context = { ...client, deviceType: device.type };
    const { user, organizationId, spend } = await sso.redeem(form, context);
    await refuseDisabled(user, context);
    await clientFitsKeys(user, context);
    const attempt = await allowedLoginAttempt(user.email, client.ipAddress);
    const known = await findDevice(db, user.id, device.identifier);
    const second = await secondStep(user, form, context, attempt, known, log);
    await attempt.succeeded();
    await deps.loginChecks?.beforeLogin(user, form, Boolean(known), true, log);
    // A code logs in once: a second redemption racing this one loses.
    if (!(await spend())) {
      deps.instruments?.loginFailed('sso');
      throw new OAuthError('invalid_grant', 'invalid_grant', 'The authorization code is invalid or has been used.');
    }
    const deviceRow = await registerDevice(user, device, known);
    const tokens = await deps.tokens.issueUserTokens({ user, device: deviceRow, clientId, scopes, withRefreshToken: scopes.includes('offline_access') });
    await deps.audit.record(db, context, { type: EventType.User_LoggedIn, userId: user.id, actingUserId: user.id });
    const rememberToken = second.remember && deps.twoFactor ? await deps.twoFactor.issueRememberToken(user, deviceRow.id) : null;
    await deps.loginChecks?.afterLogin(user, device, Boolean(deviceRow.created), context, log);
    return userTokenResponse({ user, device: deviceRow, ssoOrganizationId: organizationId }, tokens, scopes.join(' '), rememberToken ? { TwoFactorToken: rememberToken } : {});
  }

  async function refreshGrant(form: TokenForm): Promise<Record<string, unknown>> {
    const clientId = required(form, 'client_id');
    const refreshed = await deps.tokens.refresh(required(form, 'refresh_token'), clientId);
    if (!refreshed) throw new OAuthError('invalid_grant', 'invalid_grant', 'The refresh token is invalid or expired.');
    return userTokenResponse({ user: refreshed.user, device: null }, refreshed.tokens, 'api offline_access');
  }

  /** `bw login --apikey`: client id `user.<id>`, the personal API key as secret. */
  async function userApiKeyGrant(form: TokenForm, client: ClientContext): Promise<Record<string, unknown>> {
    const clientId = required(form, 'client_id');
    const scopes = (form.scope ?? '').split(' ').filter(Boolean);
    if (scopes.length !== 1 || scopes[0] !== 'api') throw new OAuthError('invalid_scope', 'The user API key grants the api scope only.');
    const userId = clientId.slice('user.'.length).toLowerCase();
    const secret = required(form, 'client_secret');
    const user = isGuid(userId) ? await findUserById(db, userId) : undefined;
    if (!user || !safeEqual(secret, user.api_key)) {
      deps.instruments?.loginFailed('api-key');
      throw new OAuthError('invalid_client', 'invalid_client', 'client_id or client_secret is incorrect.');
    }
    if (user.disabled) {
      await deps.audit.record(db, client, { type: EventType.User_FailedLogIn, userId: user.id, actingUserId: user.id });
      throw new OAuthError('invalid_grant', DISABLED);
    }
    const device = deviceOf(form);
    await clientFitsKeys(user, { ...client, deviceType: device.type });
    const deviceRow = await registerDevice(user, device, await findDevice(db, user.id, device.identifier));
    const tokens = await deps.tokens.issueUserTokens({ user, device: deviceRow, clientId, scopes, withRefreshToken: false });
    await deps.audit.record(db, { ...client, deviceType: device.type }, { type: EventType.User_LoggedIn, userId: user.id, actingUserId: user.id });
    return userTokenResponse({ user, device: deviceRow }, tokens, 'api');
  }

  const clientCredentialGrants: readonly ClientCredentialsGrant[] = [
    { accepts: (clientId) => clientId.startsWith('user.'), grant: userApiKeyGrant },
    ...(deps.clientCredentialGrants ?? []),
  ];

  return {
    async token(caller: AnonymousCaller, body: unknown): Promise<Record<string, unknown>> {
      const { client, log } = caller;
      const form = normalizeForm(body);
      const grantType = required(form, 'grant_type');
      switch (grantType) {
        case 'password':
          return passwordGrant(form, client, log);
        case 'refresh_token':
          return refreshGrant(form);
        case 'authorization_code':
          if (!deps.ssoLogin) throw new OAuthError('unsupported_grant_type', `The grant type "${grantType}" is not supported.`);
          return ssoGrant(deps.ssoLogin, form, client, log);
        case 'webauthn':
          if (!deps.passkeyLogin) throw new OAuthError('unsupported_grant_type', `The grant type "${grantType}" is not supported.`);
          return passkeyGrant(deps.passkeyLogin, form, client, log);
        case 'client_credentials': {
          const clientId = required(form, 'client_id');
          const handler = clientCredentialGrants.find((candidate) => candidate.accepts(clientId));
          if (!handler) throw new OAuthError('invalid_client', 'invalid_client', 'client_id or client_secret is incorrect.');
          return handler.grant(form, client);
        }
        default: {
          const extension = deps.extensionGrants?.[grantType];
          if (extension) return extension(caller, form);
          throw new OAuthError('unsupported_grant_type', `The grant type "${grantType}" is not supported.`);
        }
      }
    },
  };
}

export type IdentityService = ReturnType<typeof createIdentityService>;
