import { randomBytes } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import type { AnonymousCaller, ClientContext } from '../../http/request-context.js';
import { safeEqual } from '../../shared/constant-time.js';
import { findUserByEmail, type UserRow } from '../../platform/auth/users.repository.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import type { MailBrand } from '../mail/templates.js';
import type { Pushes } from '../../platform/push/pushes.js';
import type { PushRegistrations } from '../../platform/push/push-registrations.js';
import { CodePurpose, type MailedCodes } from './mailed-codes.js';
import {
  claimTimeStep,
  findProvider,
  findUserWithTwoFactor,
  insertRememberToken,
  providersOf,
  recoveryHashOf,
  setProviderMetadata,
  takeRecovery,
  validRememberToken,
  type ProviderRow,
} from './two-factor.repository.js';
import { totpStep } from './totp.js';
import { keysOf, type WebAuthn } from './webauthn.js';
import { mailTurnedOff, metadataOf, OFFERED_PROVIDERS, pushChange, recoveryHash, sha256, turnOffTwoFactor, TwoFactorProviderType } from './two-factor-rules.js';

export interface Challenge {
  TwoFactorProviders: string[];
  TwoFactorProviders2: Record<string, Record<string, unknown> | null>;
  Email?: string;
}

/** "j***@example.com": the address a two-step email code goes to, as the login page shows it. */
export function redactEmail(email: string): string {
  const [local = '', domain = ''] = email.split('@');
  const shown = local.length <= 2 ? local.slice(0, 1) : local.slice(0, 2);
  return `${shown}${'*'.repeat(Math.max(1, local.length - shown.length))}@${domain}`;
}

/**
 * Two-step login at login time: whether a second factor is asked for, the challenge, checking
 * the answer (the identity service's token grant), remember tokens, and what the login page
 * offers a user without their second factor: a mailed code and the recovery code.
 */
export function createTwoFactorLogin(deps: {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  audit: AuditLog;
  mailer: Mailer;
  brand: MailBrand;
  codes: MailedCodes;
  pushes: Pushes;
  /** The mobile relay's registrations: a member the two-step login policy revokes leaves its organization's pushes. */
  registrations?: PushRegistrations;
  rememberDays: number;
  webauthn: WebAuthn;
}) {
  const { db, clock } = deps;
  const now = () => clock.now().toISOString();
  const codes = deps.codes;

  /** The recovery code matches: every provider is turned off and the code is spent. */
  async function recover(user: UserRow, code: string, client: ClientContext, log: MailLog): Promise<boolean> {
    const hash = recoveryHash(user.id, code);
    const stored = await recoveryHashOf(db, user.id);
    if (!stored || !safeEqual(stored, hash)) return false;
    const revocations = await db.transaction().execute(async (tx) => {
      if (!(await takeRecovery(tx, user.id, hash))) return null;
      const off = await turnOffTwoFactor(tx, deps.audit, client, { userId: user.id, event: { type: EventType.User_Recovered2fa, userId: user.id, actingUserId: user.id }, now: now() });
      return off.revocations;
    });
    if (!revocations) return false;
    pushChange(deps, user.id, revocations);
    await mailTurnedOff(deps, user, `Your recovery code was used ${client.ipAddress ? `from ${client.ipAddress} ` : ''}at ${clock.now().toUTCString()}: two-step login is now off for your account.`, log);
    return true;
  }

  async function enabledProviders(userId: string): Promise<ProviderRow[]> {
    return (await providersOf(db, userId)).filter((row) => Boolean(row.enabled) && OFFERED_PROVIDERS.includes(row.type));
  }

  return {
    /** Whether two-step login is on: the same rule as sync's profile and every listing (`twoFactorOn`). */
    async isEnabled(userId: string): Promise<boolean> {
      return Boolean((await findUserWithTwoFactor(db, userId))?.two_factor_enabled);
    },

    /**
     * Anonymous, from the login page: mails a login code when the master password hash (or an
     * approved device request's access code) is right and the email provider is on. Every
     * failure gives the same answer.
     */
    async sendEmailLogin(
      { log }: AnonymousCaller,
      body: { email: string; masterPasswordHash?: string | null; authRequestId?: string | null; authRequestAccessCode?: string | null },
      authRequestValid: (userId: string, id: string, code: string) => Promise<boolean>,
    ): Promise<boolean> {
      const user = await findUserByEmail(db, normalizeEmail(body.email));
      const proven = body.authRequestAccessCode
        ? Boolean(user) && Boolean(body.authRequestId) && (await authRequestValid(user?.id ?? '', body.authRequestId ?? '', body.authRequestAccessCode))
        : await deps.hasher.verify(body.masterPasswordHash ?? '', user?.master_password_hash ?? null);
      if (!user || !proven || user.disabled) return false;
      const provider = await findProvider(db, user.id, TwoFactorProviderType.Email);
      const to = metadataOf(provider).Email;
      if (!provider?.enabled || typeof to !== 'string') return false;
      await codes.send(user, CodePurpose.TwoFactorLogin, to, 'Your two-step login code', `Use this code to finish logging in to ${deps.brand.serverName}:`, log);
      return true;
    },

    /** `POST /two-factor/recover` (older clients): email, master password hash and recovery code. */
    async recoverByCode({ client, log }: AnonymousCaller, body: { email: string; masterPasswordHash: string; recoveryCode: string }): Promise<boolean> {
      const user = await findUserByEmail(db, normalizeEmail(body.email));
      const valid = await deps.hasher.verify(body.masterPasswordHash, user?.master_password_hash ?? null);
      if (!user || !valid) return false;
      return recover(user, body.recoveryCode, client, log);
    },

    /** The login challenge's providers, or null when the user has none on. */
    async challenge(user: UserRow): Promise<Challenge | null> {
      const rows = await enabledProviders(user.id);
      if (rows.length === 0) return null;
      const providers2: Challenge['TwoFactorProviders2'] = {};
      let email: string | undefined;
      for (const row of rows) {
        if (row.type === (TwoFactorProviderType.Email as number)) {
          const stored = metadataOf(row).Email;
          const to = typeof stored === 'string' ? stored : user.email;
          providers2[String(row.type)] = { Email: redactEmail(to) };
          email = user.email;
        } else if (row.type === (TwoFactorProviderType.WebAuthn as number)) {
          providers2[String(row.type)] = await deps.webauthn.assertionOptions(user, keysOf(row));
        } else providers2[String(row.type)] = null;
      }
      return { TwoFactorProviders: Object.keys(providers2), TwoFactorProviders2: providers2, ...(email ? { Email: email } : {}) };
    },

    /**
     * Checks a second factor at login. Remember tokens (5) must be this device's, unexpired and
     * issued under the current security stamp; a recovery code (8) turns two-step login off.
     */
    async verifyLogin(user: UserRow, type: number, token: string, deviceId: string | null, client: ClientContext, log: MailLog): Promise<boolean> {
      switch (type as TwoFactorProviderType) {
        case TwoFactorProviderType.Authenticator: {
          const row = await findProvider(db, user.id, TwoFactorProviderType.Authenticator);
          const key = metadataOf(row).Key;
          if (!row?.enabled || typeof key !== 'string') return false;
          const last = row.last_used_step === null ? null : Number(row.last_used_step);
          const step = await totpStep(key, token, clock.now(), last);
          return step !== null && (await claimTimeStep(db, user.id, step));
        }
        case TwoFactorProviderType.Email: {
          const row = await findProvider(db, user.id, TwoFactorProviderType.Email);
          return Boolean(row?.enabled) && (await codes.use(user.id, CodePurpose.TwoFactorLogin, token));
        }
        case TwoFactorProviderType.WebAuthn: {
          const row = await findProvider(db, user.id, TwoFactorProviderType.WebAuthn);
          if (!row?.enabled) return false;
          const keys = await deps.webauthn.verify(user, keysOf(row), token);
          if (!keys) return false;
          await setProviderMetadata(db, user.id, TwoFactorProviderType.WebAuthn, { keys }, now());
          return true;
        }
        case TwoFactorProviderType.Remember:
          return deviceId !== null && (await validRememberToken(db, sha256(token), user.id, deviceId, user.security_stamp, now()));
        case TwoFactorProviderType.RecoveryCode:
          return recover(user, token, client, log);
        default:
          return false;
      }
    },

    /** A "remember this device" token for `TwoFactorToken` in the login response. */
    async issueRememberToken(user: UserRow, deviceId: string): Promise<string> {
      const token = randomBytes(32).toString('base64url');
      const created = clock.now();
      await insertRememberToken(db, {
        token_hash: sha256(token),
        user_id: user.id,
        device_id: deviceId,
        security_stamp: user.security_stamp,
        expiration_date: new Date(created.getTime() + deps.rememberDays * 86_400_000).toISOString(),
        creation_date: created.toISOString(),
      });
      return token;
    },
  };
}

export type TwoFactorLogin = ReturnType<typeof createTwoFactorLogin>;
