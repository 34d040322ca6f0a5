import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db, Executor } from '../../db/database.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { BadRequest } from '../../http/errors.js';
import { sendOrFail } from '../mail/delivery.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { findUserByEmail, insertUser, type UserRow } from '../../platform/auth/users.repository.js';
import { preloginOf, type RegisterBody, type RegisterFinishBody } from './accounts.schemas.js';
import type { AnonymousCaller } from '../../http/request-context.js';
import { DEFAULT_KDF, normalizeEmail, validateKdf, type KdfSettings } from '../../platform/auth/kdf.js';
import { accountSalt, kdfOf, requireAccountSalt, sameKdf } from '../../platform/auth/master-password.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { finishSignupLink, OPERATOR_INVITATION_CLAIM, requireEnc, VERIFICATION_TYP } from './account-rules.js';
import { randomApiKey } from '../../platform/auth/api-keys.js';
import { accountKeysOfRequest, v2KeyColumns, type AccountKeys } from './account-keys.js';

/** Says whether an email has a pending organization invitation (registration stays open to it). */
export type InvitationCheck = (db: Executor, email: string, proof: InvitationProof) => Promise<boolean>;

/**
 * Says whether an emergency access invitation token is this server's, for that grant and that
 * email, and the grant still an invitation of that address.
 */
export type EmergencyInvitationCheck = (db: Executor, email: string, token: string, emergencyAccessId: string) => Promise<boolean>;

/** What a registration carries from an organization invitation link. */
export interface InvitationProof {
  token?: string | null;
  organizationUserId?: string | null;
  /** From an emergency access invitation link (`acceptEmergencyAccessInviteToken`, `acceptEmergencyAccessId`). */
  emergencyAccessToken?: string | null;
  emergencyAccessId?: string | null;
}

interface Registration {
  email: string;
  name: string | null;
  masterPasswordHash: string;
  hint: string | null;
  key: string;
  publicKey: string | null;
  encryptedPrivateKey: string | null;
  /** Version-2 keys (or a version-1 pair) from `accountKeys`, checked; they win over the two fields above. */
  accountKeys?: AccountKeys | null;
  /** The key id of the user key, from `masterPasswordUnlock.containedKeyId`. */
  userKeyId?: string | null;
  kdf: KdfSettings;
  /** Invited by the operator (`strongroom users invite`): registers even when registration is closed. */
  invited?: boolean;
  /** The organization invitation the registration comes from, if any. */
  invitation?: InvitationProof;
}

/**
 * Mails the link that finishes registration. An address that already has an account gets no
 * mail and the same answer, so the form cannot be used to find out who has an account.
 */
async function mailRegistrationLink(mailer: Mailer, publicUrl: string, email: string, token: string, log: MailLog): Promise<void> {
  const link = finishSignupLink(publicUrl, token, email);
  const message = {
    to: email,
    subject: 'Verify your email address',
    text: ['Open this link to finish creating your account (it expires in 24 hours):', link, '', 'If you did not ask for an account, ignore this message.'].join('\n'),
  };
  await sendOrFail(mailer, message, log, 'registration', 'The mail server did not accept the verification message. Try again later.');
}

const EXPIRED_LINK = 'Expired link. Please restart registration or try logging in. You may already have an account';

/** Becoming an account: prelogin, the verification link, and registration by every client's form. */
export function createRegistrationService(deps: {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  keys: SigningKeys;
  registrationEnabled: boolean;
  isInvited: InvitationCheck;
  isEmergencyInvited: EmergencyInvitationCheck;
  mailer: Mailer;
  publicUrl: string;
}) {
  const { db, clock, hasher } = deps;

  /** The signed token that finishes a registration (it carries the name). */
  async function verificationToken(email: string, name: string | null): Promise<string> {
    const normalized = normalizeEmail(email);
    // Closed registration starts from an invitation link instead, so no one is told whether an
    // address has a pending invitation.
    if (!deps.registrationEnabled) throw new BadRequest('Open registration has been disabled by the system administrator.');
    return deps.keys.sign({ sub: normalized, ...(name ? { name } : {}) }, { typ: VERIFICATION_TYP, expiresInSeconds: 86_400 });
  }

  async function register(input: Registration): Promise<UserRow> {
    const email = normalizeEmail(input.email);
    if (!deps.registrationEnabled && !input.invited && !(await deps.isInvited(db, email, input.invitation ?? {}))) {
      throw new BadRequest('Open registration has been disabled by the system administrator.');
    }
    // An emergency access invitation does not open closed registration (the official server
    // checks open registration first); where it is open, the link's token must hold, and it
    // proves the address as a verification mail would.
    const { emergencyAccessToken, emergencyAccessId } = input.invitation ?? {};
    let emailVerified = false;
    if (emergencyAccessToken && emergencyAccessId) {
      if (!(await deps.isEmergencyInvited(db, email, emergencyAccessToken, emergencyAccessId))) throw new BadRequest('Invalid accept emergency access invite token.');
      emailVerified = true;
    }
    const kdf = validateKdf(input.kdf);
    const key = requireEnc(input.key, 'key');
    const encryptedPrivateKey = input.encryptedPrivateKey ? requireEnc(input.encryptedPrivateKey, 'encryptedPrivateKey') : null;
    if (await findUserByEmail(db, email)) throw BadRequest.field('email', `Email '${email}' is already taken.`);

    const now = clock.now().toISOString();
    const user = newUserRow(
      {
        email,
        name: input.name?.trim() || null,
        masterPasswordHash: await hasher.hash(input.masterPasswordHash),
        hint: input.hint || null,
        key,
        publicKey: input.publicKey,
        privateKey: encryptedPrivateKey,
        kdf,
        accountKeys: input.accountKeys ?? null,
        userKeyId: input.userKeyId ?? null,
      },
      now,
    );
    user.email_verified = emailVerified;
    try {
      await insertUser(db, user);
    } catch (error) {
      if (isUniqueViolation(error)) throw BadRequest.field('email', `Email '${email}' is already taken.`);
      throw error;
    }
    return user;
  }

  return {
    /** Current clients: both the flat fields and the masterPasswordAuthentication/Unlock objects. */
    async registerFinish(body: RegisterFinishBody): Promise<UserRow> {
      const email = normalizeEmail(body.email);
      const auth = body.masterPasswordAuthentication;
      const unlock = body.masterPasswordUnlock;
      const flatKdf =
        body.kdf !== undefined && body.kdfIterations !== undefined
          ? { kdf: body.kdf, iterations: body.kdfIterations, memory: body.kdfMemory ?? null, parallelism: body.kdfParallelism ?? null }
          : null;
      const unlockKdf = unlock ? kdfOf(unlock.kdf) : null;
      const authKdf = auth ? kdfOf(auth.kdf) : null;
      const kdf = unlockKdf ?? authKdf ?? flatKdf;
      if (!kdf) throw BadRequest.field('kdf', 'The kdf and kdfIterations fields are required.');
      for (const other of [authKdf, flatKdf]) {
        if (other && !sameKdf(other, kdf)) throw BadRequest.field('kdf', 'KDF settings must be equal for authentication and unlock.');
      }
      // A new account has no stored salt: its salt is the trimmed, lower-cased email.
      const salt = accountSalt({ master_password_salt: null, email });
      if (auth) requireAccountSalt(auth.salt, salt, 'masterPasswordAuthentication.salt');
      if (unlock) requireAccountSalt(unlock.salt, salt, 'masterPasswordUnlock.salt');
      const masterPasswordHash = auth?.masterPasswordAuthenticationHash ?? body.masterPasswordHash;
      if (!masterPasswordHash) throw BadRequest.field('masterPasswordHash', 'The masterPasswordHash field is required.');
      if (auth && body.masterPasswordHash && auth.masterPasswordAuthenticationHash !== body.masterPasswordHash) {
        throw BadRequest.field('masterPasswordHash', 'The two master password hashes differ.');
      }
      let name = body.name ?? null;
      let invited = false;
      if (body.emailVerificationToken) {
        const claims = await deps.keys.verify(body.emailVerificationToken, { typ: VERIFICATION_TYP });
        if (!claims || claims.sub !== email) throw BadRequest.field('emailVerificationToken', 'The email verification token is invalid or expired.');
        name ??= typeof claims.name === 'string' ? claims.name : null;
        invited = claims[OPERATOR_INVITATION_CLAIM] === true;
      }
      return register({
        email,
        name,
        masterPasswordHash,
        hint: body.masterPasswordHint ?? null,
        key: unlock?.masterKeyWrappedUserKey ?? body.userSymmetricKey ?? '',
        publicKey: body.userAsymmetricKeys?.publicKey ?? null,
        encryptedPrivateKey: body.userAsymmetricKeys?.encryptedPrivateKey ?? null,
        accountKeys: body.accountKeys ? accountKeysOfRequest(body.accountKeys, 'accountKeys') : null,
        userKeyId: unlock?.containedKeyId?.toLowerCase() ?? null,
        kdf,
        invited,
        invitation: {
          token: body.orgInviteToken,
          organizationUserId: body.organizationUserId,
          emergencyAccessToken: body.acceptEmergencyAccessInviteToken,
          emergencyAccessId: body.acceptEmergencyAccessId,
        },
      });
    },

    async registerLegacy(body: RegisterBody): Promise<UserRow> {
      return register({
        email: body.email,
        name: body.name ?? null,
        masterPasswordHash: body.masterPasswordHash,
        hint: body.masterPasswordHint ?? null,
        key: body.key,
        publicKey: body.keys?.publicKey ?? null,
        encryptedPrivateKey: body.keys?.encryptedPrivateKey ?? null,
        kdf: {
          kdf: body.kdf ?? DEFAULT_KDF.kdf,
          iterations: body.kdfIterations ?? DEFAULT_KDF.iterations,
          memory: body.kdfMemory ?? null,
          parallelism: body.kdfParallelism ?? null,
        },
        invitation: { token: body.token, organizationUserId: body.organizationUserId },
      });
    },

    verificationToken,

    /**
     * Starts registration as the official server does: with SMTP the link is mailed and nothing
     * is answered (the caller answers 204); without SMTP the token itself is the answer.
     */
    async startRegistration({ log }: AnonymousCaller, email: string, name: string | null): Promise<{ token: string } | { mailed: true }> {
      const token = await verificationToken(email, name);
      if (!deps.mailer.enabled) return { token };
      const normalized = normalizeEmail(email);
      if (!(await findUserByEmail(db, normalized))) await mailRegistrationLink(deps.mailer, deps.publicUrl, normalized, token, log);
      return { mailed: true };
    },

    /** The web vault reports a followed link before showing the finish form; a spent or bad link is refused there. */
    async verificationLinkOpened(email: string, token: string): Promise<void> {
      const normalized = normalizeEmail(email);
      const claims = await deps.keys.verify(token, { typ: VERIFICATION_TYP });
      if (!claims || claims.sub !== normalized || (await findUserByEmail(db, normalized))) throw new BadRequest(EXPIRED_LINK);
    },

    /** KDF settings for an email; an unknown email gets the defaults, so accounts cannot be enumerated. */
    async prelogin(email: string) {
      const normalized = normalizeEmail(email);
      const user = await findUserByEmail(db, normalized);
      if (!user) return preloginOf(DEFAULT_KDF.kdf, DEFAULT_KDF.iterations, DEFAULT_KDF.memory, DEFAULT_KDF.parallelism, normalized);
      return preloginOf(user.kdf, user.kdf_iterations, user.kdf_memory, user.kdf_parallelism, user.master_password_salt ?? normalized);
    },
  };
}

export type RegistrationService = ReturnType<typeof createRegistrationService>;

/** What a new account is made of; everything else of its row starts the same for every account. */
export interface NewUser {
  email: string;
  name: string | null;
  /** The server-side hash of the client's master password hash. */
  masterPasswordHash: string;
  hint: string | null;
  key: string;
  publicKey: string | null;
  privateKey: string | null;
  kdf: KdfSettings;
  /** When sent, the account's keys (a version-2 set included); they win over publicKey and privateKey. */
  accountKeys?: AccountKeys | null;
  userKeyId?: string | null;
}

/** The row of a new account, as registration writes it (tests seed accounts with it too). */
export function newUserRow(user: NewUser, now: string): UserRow {
  return {
    id: randomUUID(),
    email: user.email,
    name: user.name,
    email_verified: false,
    master_password_hash: user.masterPasswordHash,
    master_password_hint: user.hint,
    master_password_salt: null,
    key: user.key,
    public_key: user.accountKeys?.publicKey ?? user.publicKey,
    private_key: user.accountKeys?.wrappedPrivateKey ?? user.privateKey,
    kdf: user.kdf.kdf,
    kdf_iterations: user.kdf.iterations,
    kdf_memory: user.kdf.memory,
    kdf_parallelism: user.kdf.parallelism,
    security_stamp: randomUUID(),
    api_key: randomApiKey(),
    user_key_id: user.userKeyId ?? null,
    // Self-hosted accounts get every personal feature; there is no billing here.
    premium: true,
    culture: 'en-US',
    avatar_color: null,
    equivalent_domains: null,
    excluded_global_equivalent_domains: null,
    force_password_reset: false,
    verify_devices: true,
    creation_date: now,
    revision_date: now,
    account_revision_date: now,
    last_password_change_date: null,
    disabled: false,
    storage_bytes: 0,
    ...v2KeyColumns(user.accountKeys?.v2 ?? null),
  };
}
