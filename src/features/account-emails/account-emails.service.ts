import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { isEncString } from '../../http/enc-string.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { OAuthError } from '../../http/error-handler.js';
import type { AnonymousCaller, ClientContext, UserCaller } from '../../http/request-context.js';
import { findUserByEmail, findUserById, updateUser, type UserRow } from '../../platform/auth/users.repository.js';
import { deviceTypeName } from '../devices/device-types.js';
import { normalizeEmail } from '../../platform/auth/kdf.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { deleteRefreshTokensOfUser } from '../../platform/auth/tokens.repository.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import { sendOrFail, sendOrLog } from '../mail/delivery.js';
import { renderMail, type MailBrand } from '../mail/templates.js';
import { logOutPush } from '../../platform/push/push-messages.js';
import type { Pushes } from '../../platform/push/pushes.js';
import type { LimitStore } from '../rate-limits/limit-store.js';
import { keyDigest } from '../rate-limits/rate-limits.js';
import { CodePurpose, type MailedCodes } from '../two-factor/mailed-codes.js';
import { requireMasterPassword } from '../../platform/auth/secret-verification.js';

const VERIFY_TYP = 'strongroom-verify-email';
const VERIFY_SECONDS = 24 * 60 * 60;
const INVALID_TOKEN = 'Invalid token.';
const HOUR = 3_600_000;

/** The official DeviceType names the new-device mail shows (src/Core/Enums/DeviceType.cs). */
export interface AccountEmailSettings {
  /** Refuse password logins until the address is verified (a link is mailed then). */
  requireVerifiedEmail: boolean;
  /** Mail the account when it logs in from a device it never used. */
  newDeviceLoginMail: boolean;
  /** The official new-device verification (NewDeviceOtp) for accounts without two-step login. */
  newDeviceVerification: boolean;
}

/**
 * Account mail: email verification, the password hint, change of email with a code sent to
 * the new address, the new-device notice and the official new-device verification.
 */
export function createAccountEmails(deps: {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  keys: SigningKeys;
  mailer: Mailer;
  brand: MailBrand;
  codes: MailedCodes;
  limits: LimitStore;
  pushes: Pushes;
  settings: AccountEmailSettings;
}) {
  const { db, clock, brand } = deps;

  /** Whether `key` may send another mail now (`count` per `periodMs`); past it the caller stays silent. */
  async function allowed(key: string, count: number, periodMs: number): Promise<boolean> {
    const decision = await deps.limits.consume([{ key: `acctmail:${keyDigest(key)}`, intervalMs: periodMs / count, burst: count }], clock.now().getTime());
    return decision.allowed;
  }

  async function send(to: string, content: Parameters<typeof renderMail>[2], log: MailLog, failure: 'throw' | 'log'): Promise<void> {
    const message = renderMail(to, brand, content);
    await (failure === 'throw' ? sendOrFail : sendOrLog)(deps.mailer, message, log, 'account');
  }

  /** Mails the verification link and answers it (the admin console shows it when there is no SMTP). */
  async function mailVerification(user: UserRow, log: MailLog, failure: 'throw' | 'log'): Promise<string> {
    const token = await deps.keys.sign({ sub: user.id, email: user.email }, { typ: VERIFY_TYP, expiresInSeconds: VERIFY_SECONDS });
    const params = new URLSearchParams({ userId: user.id, token });
    const url = `${brand.publicUrl}/#/verify-email?${params.toString()}`;
    await send(
      user.email,
      {
        subject: 'Verify your email address',
        paragraphs: [`Confirm that ${user.email} is your address for ${brand.serverName}. The link works for 24 hours.`],
        link: { label: 'Verify email address', url },
        footnote: 'If you did not create an account, ignore this message.',
      },
      log,
      failure,
    );
    return url;
  }

  async function verifiedUserOf(userId: string): Promise<UserRow> {
    const user = await findUserById(db, userId);
    if (!user) throw new NotFound();
    return user;
  }

  return {
    /**
     * POST /accounts/verify-email (and the admin console's resend): mails the account a
     * verification link (400 when already verified); answers the link and whether it was mailed
     * (without SMTP it went to the log). It reads only the user and the log of its caller, so the
     * console's operator, who has no client of their own, resends through it too.
     */
    async sendVerification({ userId, log }: UserCaller): Promise<{ email: string; link: string; mailed: boolean }> {
      const user = await verifiedUserOf(userId);
      if (user.email_verified) throw new BadRequest('Email is already verified.');
      if (!(await allowed(`verify:${user.id}`, 5, HOUR))) throw new BadRequest('Too many verification mails were sent. Try again later.');
      const link = await mailVerification(user, log, 'throw');
      return { email: user.email, link, mailed: deps.mailer.enabled };
    },

    /** POST /accounts/verify-email-token: the link's user id and token mark the address verified. */
    async verifyToken(userId: string, token: string): Promise<void> {
      const payload = await deps.keys.verify(token, { typ: VERIFY_TYP });
      const user = payload && payload.sub === userId.toLowerCase() ? await findUserById(db, payload.sub) : undefined;
      // A token for an address the account no longer has does not verify the new one.
      if (!user || payload?.email !== user.email) throw BadRequest.field('token', INVALID_TOKEN);
      if (!user.email_verified) await updateUser(db, user.id, { email_verified: true, revision_date: clock.now().toISOString() });
    },

    /**
     * POST /accounts/password-hint: mails the hint (or that there is none). The answer is the
     * same for unknown addresses and past the per-address limit (3 an hour), so the form tells
     * nobody whether an account exists.
     */
    async passwordHint({ log }: AnonymousCaller, email: string): Promise<void> {
      const normalized = normalizeEmail(email);
      if (!(await allowed(`hint:${normalized}`, 3, HOUR))) return;
      const user = await findUserByEmail(db, normalized);
      if (!user || user.disabled) return;
      const hint = user.master_password_hint;
      await send(
        user.email,
        {
          subject: 'Your master password hint',
          paragraphs: hint
            ? ['Someone asked for the hint of your master password. Your hint is:', hint]
            : ['Someone asked for the hint of your master password, but you have not set one.'],
          footnote: `If this was not you, nothing needs doing. ${brand.serverName} never mails your master password.`,
        },
        log,
        'log',
      );
    },

    /**
     * POST /accounts/email-token: after the master password, a code goes to the new address.
     * An address that already has an account gets no code and the same answer.
     */
    async startEmailChange({ userId, log }: UserCaller, body: { newEmail: string; masterPasswordHash: string }): Promise<void> {
      const user = await verifiedUserOf(userId);
      await requireMasterPassword(deps.hasher, user, body.masterPasswordHash);
      const newEmail = normalizeEmail(body.newEmail);
      if (newEmail === user.email) throw BadRequest.field('newEmail', 'This is already your email address.');
      if (await findUserByEmail(db, newEmail)) return;
      await deps.codes.send(user, CodePurpose.EmailChange, newEmail, 'Your email change code', `Enter this code to use this address for your ${brand.serverName} account:`, log);
    },

    /**
     * POST /accounts/email: the code sent to the new address, with what the client derived
     * again under it (the new salt): the master password hash and the re-wrapped user key. The
     * address counts as verified, the security stamp changes (every session ends) and the old
     * address is told.
     */
    async changeEmail(
      { userId, client, log }: UserCaller,
      body: { newEmail: string; masterPasswordHash: string; newMasterPasswordHash: string; token: string; key: string; masterPasswordHint?: string | null },
    ): Promise<void> {
      const user = await verifiedUserOf(userId);
      await requireMasterPassword(deps.hasher, user, body.masterPasswordHash);
      if (!isEncString(body.key)) throw BadRequest.field('key', 'The key field is not a valid encrypted string.');
      const newEmail = normalizeEmail(body.newEmail);
      if (!(await deps.codes.use(user.id, CodePurpose.EmailChange, body.token, newEmail))) throw BadRequest.field('token', INVALID_TOKEN);
      const hash = await deps.hasher.hash(body.newMasterPasswordHash);
      const now = clock.now().toISOString();
      try {
        await db.transaction().execute(async (tx) => {
          await updateUser(tx, user.id, {
            email: newEmail,
            email_verified: true,
            master_password_hash: hash,
            master_password_salt: null,
            key: body.key,
            ...(body.masterPasswordHint !== undefined ? { master_password_hint: body.masterPasswordHint || null } : {}),
            security_stamp: randomUUID(),
            revision_date: now,
            account_revision_date: now,
          });
          await deleteRefreshTokensOfUser(tx, user.id);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw BadRequest.field('newEmail', 'Email already taken.');
        throw error;
      }
      deps.pushes.send(logOutPush(user.id, client.deviceIdentifier));
      await send(
        user.email,
        { subject: 'Your email address was changed', paragraphs: [`Your ${brand.serverName} account now uses ${newEmail}. Log in with that address from now on.`], footnote: 'If this was not you, contact your administrator now.' },
        log,
        'log',
      );
    },

    // ---- Login (identity service) ----

    /**
     * Checks before a password login completes: a verified address when the setting asks for
     * one, and the official new-device verification (NewDeviceOtp) for accounts without
     * two-step login. Throws the official errors.
     */
    async beforeLogin(user: UserRow, form: Record<string, string>, knownDevice: boolean, secondFactor: boolean, log: MailLog): Promise<void> {
      if (deps.settings.requireVerifiedEmail && !user.email_verified) {
        if (await allowed(`verify:${user.id}`, 5, HOUR)) await mailVerification(user, log, 'log');
        const message = 'Your email address is not verified. Open the link just mailed to you, then log in again.';
        throw new OAuthError('invalid_grant', message, message);
      }
      if (!deps.settings.newDeviceVerification || secondFactor || !user.verify_devices) return;
      if (clock.now().getTime() - Date.parse(user.creation_date) < 24 * HOUR) return;
      if (knownDevice) return;
      const otp = form.newdeviceotp;
      if (otp !== undefined) {
        if (!(await deps.codes.use(user.id, CodePurpose.NewDevice, otp))) throw new OAuthError('device_error', 'Invalid New Device OTP', 'invalid new device otp');
        if (!user.email_verified) await updateUser(db, user.id, { email_verified: true });
        return;
      }
      const known = await db.selectFrom('devices').select('id').where('user_id', '=', user.id).executeTakeFirst();
      if (!known) return;
      await deps.codes.send(user, CodePurpose.NewDevice, user.email, 'Your new device verification code', `Enter this code to finish logging in to ${brand.serverName} on a new device:`, log);
      throw new OAuthError('device_error', 'New device verification required', 'new device verification required');
    },

    /** After a login from a device the account never used (and not its first minutes): a notice. */
    async afterLogin(user: UserRow, device: { type: number; name: string }, newDevice: boolean, client: ClientContext, log: MailLog): Promise<void> {
      if (!deps.settings.newDeviceLoginMail || !newDevice) return;
      if (clock.now().getTime() - Date.parse(user.creation_date) < 10 * 60_000) return;
      await send(
        user.email,
        {
          subject: `New login on ${brand.serverName}`,
          paragraphs: [
            `Your account was logged in to from a new device: ${deviceTypeName(device.type) ?? 'Unknown device'} (${device.name}).`,
            `When: ${clock.now().toUTCString()}. Address: ${client.ipAddress ?? 'unknown'}.`,
          ],
          footnote: 'If this was not you, change your master password and turn on two-step login.',
        },
        log,
        'log',
      );
    },
  };
}

export type AccountEmails = ReturnType<typeof createAccountEmails>;
