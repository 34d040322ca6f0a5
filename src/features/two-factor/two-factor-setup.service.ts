import { randomInt } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound, Unauthorized } from '../../http/errors.js';
import type { ClientContext, OperatorCaller, UserCaller } from '../../http/request-context.js';
import { findUserById, type UserRow } from '../../platform/auth/users.repository.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import type { Mailer } from '../mail/mailer.js';
import type { MailBrand } from '../mail/templates.js';
import type { Pushes } from '../../platform/push/pushes.js';
import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import { CodePurpose, type MailedCodes } from './mailed-codes.js';
import { revokeNonCompliant } from '../policies/two-factor-policy.js';
import {
  deleteAllProviders,
  deleteProvider,
  deleteRememberTokens,
  findProvider,
  providersOf,
  setRecoveryHash,
  upsertProvider,
  type ProviderRow,
} from './two-factor.repository.js';
import { isAuthenticatorKey, newAuthenticatorKey, totpStep } from './totp.js';
import { keysOf, MAX_WEBAUTHN_KEYS, type WebAuthn } from './webauthn.js';
import { secretMatches } from '../../platform/auth/secret-verification.js';
import { mailTurnedOff, metadataOf, pushChange, recoveryHash, sha256, turnOffTwoFactor, TwoFactorProviderType } from './two-factor-rules.js';

const VERIFICATION_TYP = 'strongroom-2fa-verification';
const VERIFICATION_SECONDS = 30 * 60;

/** The operator's removal of a user who has no provider on. */
export const TWO_STEP_LOGIN_NOT_ON = 'Two-step login is not on for this account: there is nothing to remove.';

const USER_VERIFICATION_FAILED = 'User verification failed.';
const INVALID_TOKEN = 'Invalid token.';

export interface SecretVerification {
  masterPasswordHash?: string | null;
  otp?: string | null;
  /** The token `get-authenticator` / `get-email` answered: proves the password was checked a moment ago. */
  userVerificationToken?: string | null;
}

/** A 32-character recovery code in the official alphabet, in groups of four as the web vault prints it. */
function newRecoveryCode(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
  return Array.from({ length: 32 }, () => alphabet[randomInt(alphabet.length)]).join('');
}

/**
 * Setting two-step login up: the account's settings pages turning providers on and off, the
 * recovery code, and the operator's removal for a user who lost their second factor.
 */
export function createTwoFactorSetup(deps: {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  audit: AuditLog;
  keys: SigningKeys;
  mailer: Mailer;
  brand: MailBrand;
  codes: MailedCodes;
  pushes: Pushes;
  /** The mobile relay's registrations: a member the two-step login policy revokes leaves its organization's pushes. */
  registrations?: PushRegistrations;
  webauthn: WebAuthn;
}) {
  const { db, clock } = deps;
  const now = () => clock.now().toISOString();
  const codes = deps.codes;

  async function userOrThrow(userId: string): Promise<UserRow> {
    const user = await findUserById(db, userId);
    if (!user) throw new Unauthorized();
    return user;
  }

  /** The master password hash or a user-verification code (POST /accounts/request-otp), as the official VerifySecretAsync. */
  async function passwordMatches(user: UserRow, secret: SecretVerification): Promise<boolean> {
    return secretMatches(db, deps.hasher, clock, user, { masterPasswordHash: secret.masterPasswordHash ?? null, otp: secret.otp ?? null });
  }

  /** The master password hash, or a mailed user-verification code, must be right. */
  async function verifySecret(user: UserRow, secret: SecretVerification): Promise<void> {
    if (!(await passwordMatches(user, secret))) throw BadRequest.field('masterPasswordHash', USER_VERIFICATION_FAILED);
  }

  /** Binds a verification token to the user, their security stamp, the provider and (authenticator) the key. */
  async function verificationToken(user: UserRow, type: TwoFactorProviderType, key?: string): Promise<string> {
    return deps.keys.sign({ sub: user.id, sstamp: user.security_stamp, prov: type, ...(key ? { kh: sha256(key) } : {}) }, { typ: VERIFICATION_TYP, expiresInSeconds: VERIFICATION_SECONDS });
  }

  /**
   * The caller proves who they are with the token `get-*` answered (current clients) or the
   * master password hash (older clients send it with every change).
   */
  async function verifyChange(user: UserRow, secret: SecretVerification, type: TwoFactorProviderType, key?: string): Promise<void> {
    if (secret.userVerificationToken) {
      const payload = await deps.keys.verify(secret.userVerificationToken, { typ: VERIFICATION_TYP });
      const ok = payload && payload.sub === user.id && payload.sstamp === user.security_stamp && payload.prov === type && (key === undefined || payload.kh === sha256(key));
      if (!ok) throw BadRequest.field('userVerificationToken', USER_VERIFICATION_FAILED);
      return;
    }
    await verifySecret(user, secret);
  }

  function emailDetails(row: ProviderRow | undefined) {
    const email = metadataOf(row).Email;
    return { enabled: Boolean(row?.enabled), email: typeof email === 'string' ? email : null };
  }

  /**
   * Removes providers in a transaction; the last one gone revokes memberships the policy binds.
   * Removing a provider the user does not have changes nothing, records nothing and tells no one.
   */
  async function disable(user: UserRow, types: readonly TwoFactorProviderType[] | 'all', client: ClientContext, event: EventType): Promise<void> {
    const revocations = await db.transaction().execute(async (tx) => {
      let removed = 0;
      if (types === 'all') removed = await deleteAllProviders(tx, user.id);
      else for (const type of types) if (await deleteProvider(tx, user.id, type)) removed++;
      if (removed === 0) return null;
      const left = await providersOf(tx, user.id);
      if (left.length === 0) await deleteRememberTokens(tx, user.id);
      await deps.audit.record(tx, client, { type: event, userId: user.id, actingUserId: user.id });
      return left.length === 0 ? revokeNonCompliant(tx, deps.audit, client, { userId: user.id }, now()) : [];
    });
    if (revocations) pushChange(deps, user.id, revocations);
  }

  async function enable(user: UserRow, type: TwoFactorProviderType, metadata: object, client: ClientContext, lastUsedStep: number | null = null): Promise<void> {
    await db.transaction().execute(async (tx) => {
      await upsertProvider(tx, user.id, type, metadata, now(), lastUsedStep);
      await deps.audit.record(tx, client, { type: EventType.User_Updated2fa, userId: user.id, actingUserId: user.id });
    });
    pushChange(deps, user.id, []);
  }

  /** The security keys as the official clients list them (`TwoFactorWebAuthnDetails`). */
  async function webAuthnDetails(userId: string) {
    const row = await findProvider(db, userId, TwoFactorProviderType.WebAuthn);
    return { enabled: Boolean(row?.enabled), keys: keysOf(row).map((key) => ({ name: key.name, id: key.id, migrated: false })) };
  }

  return {
    /** GET /two-factor: the caller's providers. */
    async list({ userId }: UserCaller) {
      return (await providersOf(db, userId)).map((row) => ({ object: 'twoFactorProvider' as const, type: row.type, enabled: Boolean(row.enabled) }));
    },

    async getAuthenticator({ userId }: UserCaller, secret: SecretVerification) {
      const user = await userOrThrow(userId);
      await verifySecret(user, secret);
      const row = await findProvider(db, user.id, TwoFactorProviderType.Authenticator);
      const stored = metadataOf(row).Key;
      const key = typeof stored === 'string' ? stored : await newAuthenticatorKey();
      const enabled = Boolean(row?.enabled);
      const userVerificationToken = await verificationToken(user, TwoFactorProviderType.Authenticator, key);
      return { object: 'twoFactorAuthenticator' as const, authenticator: { enabled, key }, enabled, key, userVerificationToken };
    },

    async putAuthenticator({ userId, client }: UserCaller, body: SecretVerification & { key: string; token: string }) {
      const user = await userOrThrow(userId);
      await verifyChange(user, body, TwoFactorProviderType.Authenticator, body.key);
      if (!isAuthenticatorKey(body.key)) throw BadRequest.field('key', 'The key is not a Base32 authenticator key.');
      // The code proves the app holds the key; its step is recorded so it cannot log in afterwards.
      const step = await totpStep(body.key, body.token, clock.now(), null);
      if (step === null) throw BadRequest.field('token', INVALID_TOKEN);
      await enable(user, TwoFactorProviderType.Authenticator, { Key: body.key }, client, step);
      const saved = { enabled: true, key: body.key };
      return { object: 'twoFactorAuthenticatorUpdate' as const, authenticator: saved, ...saved };
    },

    async disableAuthenticator({ userId, client }: UserCaller, body: SecretVerification & { key?: string | null }): Promise<void> {
      const user = await userOrThrow(userId);
      await verifyChange(user, body, TwoFactorProviderType.Authenticator, body.userVerificationToken ? (body.key ?? '') : undefined);
      await disable(user, [TwoFactorProviderType.Authenticator], client, EventType.User_Disabled2fa);
    },

    /** `PUT /two-factor/disable` (older clients): one provider, by type, with the master password. */
    async disableType({ userId, client }: UserCaller, body: SecretVerification & { type: number }) {
      const user = await userOrThrow(userId);
      await verifySecret(user, body);
      await disable(user, [body.type], client, EventType.User_Disabled2fa);
      return { object: 'twoFactorProvider' as const, enabled: false, type: body.type };
    },

    async getEmail({ userId }: UserCaller, secret: SecretVerification) {
      const user = await userOrThrow(userId);
      await verifySecret(user, secret);
      const row = await findProvider(db, user.id, TwoFactorProviderType.Email);
      return { object: 'twoFactorEmail' as const, email: emailDetails(row), userVerificationToken: await verificationToken(user, TwoFactorProviderType.Email) };
    },

    /** Sends the setup code to the address being set up (not yet saved). */
    async sendEmailSetup({ userId, log }: UserCaller, body: SecretVerification & { email: string }): Promise<void> {
      const user = await userOrThrow(userId);
      await verifyChange(user, body, TwoFactorProviderType.Email);
      const email = normalizeEmail(body.email);
      await codes.send(user, CodePurpose.TwoFactorSetup, email, 'Set up two-step login by email', `Enter this code to receive your ${deps.brand.serverName} two-step login codes at this address:`, log);
    },

    async putEmail({ userId, client }: UserCaller, body: SecretVerification & { email: string; token: string }) {
      const user = await userOrThrow(userId);
      await verifyChange(user, body, TwoFactorProviderType.Email);
      const email = normalizeEmail(body.email);
      if (!(await codes.use(user.id, CodePurpose.TwoFactorSetup, body.token, email))) throw BadRequest.field('token', INVALID_TOKEN);
      await enable(user, TwoFactorProviderType.Email, { Email: email }, client);
      return { object: 'twoFactorEmailUpdate' as const, email: { enabled: true, email } };
    },

    /**
     * Turns one provider off (every security key, for WebAuthn), proven with the verification
     * token of that provider's get route or the master password hash, as `DELETE /two-factor/{provider}` asks.
     */
    async disableProvider({ userId, client }: UserCaller, type: TwoFactorProviderType, body: SecretVerification): Promise<void> {
      const user = await userOrThrow(userId);
      await verifyChange(user, body, type);
      await disable(user, [type], client, EventType.User_Disabled2fa);
    },

    /** A new recovery code, shown this once: only its hash is kept, and the one before stops working. */
    async getRecover({ userId }: UserCaller, secret: SecretVerification) {
      const user = await userOrThrow(userId);
      await verifySecret(user, secret);
      const code = newRecoveryCode();
      await setRecoveryHash(db, user.id, recoveryHash(user.id, code), now());
      return { object: 'twoFactorRecover' as const, code };
    },

    /**
     * The server's operator (admin console) turns two-step login off for a user who lost their
     * second factor, as a recovery code would: every provider off, the recovery code and the
     * remember tokens gone, `User_Disabled2fa` recorded (no acting user: the operator is none),
     * and the Two-step login policy revokes the user where it binds them. The user is told by
     * mail. 404 for no such user, 400 when no provider is on.
     */
    async removeByOperator({ client, log }: OperatorCaller, userId: string): Promise<UserRow> {
      const user = await findUserById(db, userId);
      if (!user) throw new NotFound('There is no such user.');
      const revocations = await db.transaction().execute(async (tx) => {
        const on = (await providersOf(tx, user.id)).some((row) => Boolean(row.enabled));
        // The delete's count settles a race with a second removal: only one of them finds rows.
        if (!on) throw new BadRequest(TWO_STEP_LOGIN_NOT_ON);
        const off = await turnOffTwoFactor(tx, deps.audit, client, { userId: user.id, event: { type: EventType.User_Disabled2fa, userId: user.id }, now: now() });
        if (off.providers === 0) throw new BadRequest(TWO_STEP_LOGIN_NOT_ON);
        return off.revocations;
      });
      pushChange(deps, user.id, revocations);
      await mailTurnedOff(deps, user, `The operator of ${deps.brand.serverName} turned two-step login off for your account at ${clock.now().toUTCString()}.`, log);
      return user;
    },

    /** `get-webauthn`: the registered keys and a verification token for the following changes. */
    async getWebAuthn({ userId }: UserCaller, secret: SecretVerification) {
      const user = await userOrThrow(userId);
      await verifySecret(user, secret);
      return { object: 'twoFactorWebAuthn' as const, webAuthn: await webAuthnDetails(user.id), userVerificationToken: await verificationToken(user, TwoFactorProviderType.WebAuthn) };
    },

    /** `get-webauthn-challenge`: registration options; the challenge stays pending for five minutes. */
    async webAuthnChallenge({ userId }: UserCaller, secret: SecretVerification) {
      const user = await userOrThrow(userId);
      await verifyChange(user, secret, TwoFactorProviderType.WebAuthn);
      const keys = keysOf(await findProvider(db, user.id, TwoFactorProviderType.WebAuthn));
      if (keys.length >= MAX_WEBAUTHN_KEYS) throw new BadRequest('Maximum allowed WebAuthn credential count exceeded.');
      return { object: 'twoFactorWebAuthnChallenge' as const, options: await deps.webauthn.registrationOptions(user, keys) };
    },

    /** Saves the key in slot `id` (replacing one there) once its attestation answers the pending challenge. */
    async putWebAuthn({ userId, client }: UserCaller, body: SecretVerification & { id: number; name: string; deviceResponse: Record<string, unknown> }) {
      const user = await userOrThrow(userId);
      await verifyChange(user, body, TwoFactorProviderType.WebAuthn);
      const key = await deps.webauthn.register(user, body.id, body.name, body.deviceResponse);
      if (!key) throw new BadRequest('Unable to complete WebAuthn registration.');
      const others = keysOf(await findProvider(db, user.id, TwoFactorProviderType.WebAuthn)).filter((k) => k.id !== key.id);
      if (others.some((k) => k.credentialId === key.credentialId)) throw new BadRequest('This security key is already registered.');
      await enable(user, TwoFactorProviderType.WebAuthn, { keys: [...others, key].sort((a, b) => a.id - b.id) }, client);
      return { object: 'twoFactorWebAuthnUpdate' as const, webAuthn: await webAuthnDetails(user.id) };
    },

    /** Removes one key; never the last one (turn the provider off for that, as officially). */
    async deleteWebAuthn({ userId, client }: UserCaller, body: SecretVerification & { id: number }) {
      const user = await userOrThrow(userId);
      await verifyChange(user, body, TwoFactorProviderType.WebAuthn);
      const keys = keysOf(await findProvider(db, user.id, TwoFactorProviderType.WebAuthn));
      if (!keys.some((k) => k.id === body.id) || keys.length < 2) throw new BadRequest('Unable to delete WebAuthn credential.');
      await enable(user, TwoFactorProviderType.WebAuthn, { keys: keys.filter((k) => k.id !== body.id) }, client);
      return { object: 'twoFactorWebAuthnDelete' as const, webAuthn: await webAuthnDetails(user.id) };
    },
  };
}

export type TwoFactorSetup = ReturnType<typeof createTwoFactorSetup>;
