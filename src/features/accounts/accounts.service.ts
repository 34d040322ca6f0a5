import { randomInt, randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { isUniqueViolation } from '../../db/dialect.js';
import { BadRequest, GatewayError, NotFound } from '../../http/errors.js';
import type { ClientContext } from '../../http/request-context.js';
import { isEncString } from '../../http/enc-string.js';
import type { FileStore } from '../../platform/storage/file-store.js';
import { fileFoldersOf, removeFolders } from '../../platform/storage/orphans.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { sendOrFail } from '../mail/delivery.js';
import type { MailLog, Mailer } from '../mail/mailer.js';
import type { SigningKeys } from '../../platform/auth/signing-keys.js';
import { deleteRefreshTokensOfUser } from '../../platform/auth/tokens.repository.js';
import {
  deleteUser,
  findUserByEmail,
  findUserById,
  insertUser,
  listUsers,
  updateUser,
  type UserRow,
} from '../../platform/auth/users.repository.js';
import type { RegisterBody, RegisterFinishBody } from './accounts.schemas.js';
import { DEFAULT_KDF, normalizeEmail, validateKdf, type KdfSettings } from '../../platform/auth/kdf.js';
import type { PasswordHasher } from '../../platform/auth/password-hasher.js';
import { logOutPush, userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { masterPasswordMatches } from '../../platform/auth/secret-verification.js';

/** Says whether an email has a pending organization invitation (registration stays open to it). */
export type InvitationCheck = (db: Executor, email: string, proof: InvitationProof) => Promise<boolean>;

/** What a registration carries from an organization invitation link. */
export interface InvitationProof {
  token?: string | null;
  organizationUserId?: string | null;
}

/** Says whether a user is the only confirmed owner of some organization. */
export type SoleOwnerCheck = (db: Executor, userId: string) => Promise<boolean>;

interface Registration {
  email: string;
  name: string | null;
  masterPasswordHash: string;
  hint: string | null;
  key: string;
  publicKey: string | null;
  encryptedPrivateKey: string | null;
  kdf: KdfSettings;
  /** Invited by the operator (`strongroom users invite`): registers even when registration is closed. */
  invited?: boolean;
  /** The organization invitation the registration comes from, if any. */
  invitation?: InvitationProof;
}

const API_KEY_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const VERIFICATION_TYP = 'strongroom-email-verification';
/**
 * The claim that marks a verification token as an operator's invitation. Only
 * `operatorInvitationToken` sets it; the public send-verification-email route signs the email
 * and name alone, so its tokens never open closed registration.
 */
const OPERATOR_INVITATION_CLAIM = 'srv_inv';
export const OPERATOR_INVITATION_DAYS = 5;
const OPERATOR_INVITATION_LIFETIME_SECONDS = OPERATOR_INVITATION_DAYS * 24 * 60 * 60;

/** The mail server did not take an operator's invitation; the link can still be passed on. */
export class InvitationNotMailed extends GatewayError {
  constructor(
    readonly link: string,
    readonly reason: unknown,
  ) {
    super(`The mail server did not take the invitation (${reason instanceof Error ? reason.message : String(reason)}).`);
  }
}

/** A 30-character random secret, as the official server makes API keys. */
export function randomApiKey(): string {
  return Array.from({ length: 30 }, () => API_KEY_ALPHABET[randomInt(API_KEY_ALPHABET.length)]).join('');
}

function requireEnc(value: string | null | undefined, field: string): string {
  if (!value || !isEncString(value)) throw BadRequest.field(field, `The ${field} field is not a valid encrypted string.`);
  return value;
}

/** The web vault's page that finishes a registration started by mail (its finish-signup route). */
export function finishSignupLink(publicUrl: string, token: string, email: string): string {
  const params = new URLSearchParams({ token, email, fromEmail: 'true' });
  return `${publicUrl}/#/finish-signup?${params.toString()}`;
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

function sameKdf(a: KdfSettings, b: KdfSettings): boolean {
  return a.kdf === b.kdf && a.iterations === b.iterations && (a.memory ?? null) === (b.memory ?? null) && (a.parallelism ?? null) === (b.parallelism ?? null);
}

export function createAccountService(deps: {
  db: Db;
  clock: Clock;
  hasher: PasswordHasher;
  audit: AuditLog;
  keys: SigningKeys;
  registrationEnabled: boolean;
  isInvited: InvitationCheck;
  mailer: Mailer;
  publicUrl: string;
  isSoleOwner: SoleOwnerCheck;
  pushes: Pushes;
  /** Where attachment and Send files live: an account's go after its deletion commits. */
  files: FileStore;
}) {
  const { db, clock, hasher } = deps;

  async function userOrThrow(userId: string): Promise<UserRow> {
    const user = await findUserById(db, userId);
    if (!user) throw new NotFound();
    return user;
  }

  /** Commands that change security settings must carry the current master password hash. */
  async function verifySecret(user: UserRow, masterPasswordHash: string | null | undefined): Promise<void> {
    if (!(await masterPasswordMatches(hasher, user, masterPasswordHash))) {
      throw BadRequest.field('masterPasswordHash', 'Invalid password.');
    }
  }

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
    const kdf = validateKdf(input.kdf);
    const key = requireEnc(input.key, 'key');
    const encryptedPrivateKey = input.encryptedPrivateKey ? requireEnc(input.encryptedPrivateKey, 'encryptedPrivateKey') : null;
    if (await findUserByEmail(db, email)) throw BadRequest.field('email', `Email '${email}' is already taken.`);

    const now = clock.now().toISOString();
    const user: UserRow = {
      id: randomUUID(),
      email,
      name: input.name?.trim() || null,
      email_verified: false,
      master_password_hash: await hasher.hash(input.masterPasswordHash),
      master_password_hint: input.hint || null,
      master_password_salt: null,
      key,
      public_key: input.publicKey,
      private_key: encryptedPrivateKey,
      kdf: kdf.kdf,
      kdf_iterations: kdf.iterations,
      kdf_memory: kdf.memory,
      kdf_parallelism: kdf.parallelism,
      security_stamp: randomUUID(),
      api_key: randomApiKey(),
      user_key_id: null,
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
    };
    try {
      await insertUser(db, user);
    } catch (error) {
      if (isUniqueViolation(error)) throw BadRequest.field('email', `Email '${email}' is already taken.`);
      throw error;
    }
    return user;
  }

  /**
   * Deletes the account and, through the foreign keys, its devices, tokens, vault and
   * memberships. Refused while it is the only confirmed owner of an organization, as the
   * official server refuses it, so no organization is left without an owner. Takes the id, or
   * the row a caller has just read.
   */
  async function removeAccount(target: UserRow | string): Promise<void> {
    const userId = (typeof target === 'string' ? await userOrThrow(target) : target).id;
    const folders = await db.transaction().execute(async (tx) => {
      if (await deps.isSoleOwner(tx, userId)) {
        throw new BadRequest(
          'Cannot delete this user because it is the sole owner of at least one organization. Please delete these organizations or upgrade another user.',
        );
      }
      const owned = await fileFoldersOf(tx, { userId });
      await deleteUser(tx, userId);
      return owned;
    });
    await removeFolders(deps.files, folders);
    deps.pushes.send(logOutPush(userId));
  }

  /**
   * Disables or enables an account (an operator's decision). Disabling also rotates the
   * security stamp and drops the refresh tokens, so every session ends at once; the official
   * EventType has no event for it, so none is recorded. Answers whether anything changed. Takes
   * the id, or the row a caller has just read.
   */
  async function setDisabled(target: UserRow | string, disabled: boolean): Promise<boolean> {
    const user = typeof target === 'string' ? await userOrThrow(target) : target;
    const userId = user.id;
    if (Boolean(user.disabled) === disabled) return false;
    const now = clock.now().toISOString();
    await db.transaction().execute(async (tx) => {
      await updateUser(tx, userId, {
        disabled,
        ...(disabled ? { security_stamp: randomUUID() } : {}),
        revision_date: now,
        account_revision_date: now,
      });
      if (disabled) await deleteRefreshTokensOfUser(tx, userId);
    });
    // As ending the sessions: the account's open apps are told to log out now.
    if (disabled) deps.pushes.send(logOutPush(userId));
    return true;
  }

  /** A new security stamp and no refresh tokens: every token issued so far stops working, on every instance. */
  async function endSessions(userId: string): Promise<void> {
    const now = clock.now().toISOString();
    await db.transaction().execute(async (tx) => {
      await updateUser(tx, userId, { security_stamp: randomUUID(), revision_date: now, account_revision_date: now });
      await deleteRefreshTokensOfUser(tx, userId);
    });
    deps.pushes.send(logOutPush(userId));
  }

  /**
   * An operator's invitation (`strongroom users invite`, the admin console): the finish-signup
   * link, which works for OPERATOR_INVITATION_DAYS days even while registration is closed, and
   * whether it was mailed. Without SMTP nothing is sent and the caller passes the link on; a
   * mail server that refuses it is a GatewayError carrying the link.
   */
  async function inviteByOperator(email: string, log: MailLog): Promise<{ email: string; link: string; mailed: boolean }> {
    const normalized = normalizeEmail(email);
    const token = await operatorInvitationToken(normalized);
    const link = finishSignupLink(deps.publicUrl, token, normalized);
    if (!deps.mailer.enabled) return { email: normalized, link, mailed: false };
    try {
      await deps.mailer.send(
        {
          to: normalized,
          subject: 'Your invitation to Strongroom',
          text: ['You have been invited to create an account.', '', `Open this link to choose your master password (it works for ${OPERATOR_INVITATION_DAYS} days):`, link].join('\n'),
        },
        log,
      );
    } catch (error) {
      throw new InvitationNotMailed(link, error);
    }
    return { email: normalized, link, mailed: true };
  }

  /**
   * A verification token, as send-verification-email answers it, that also lets this email
   * register while open registration is off. Refused for an email that has an account.
   */
  async function operatorInvitationToken(email: string): Promise<string> {
    const normalized = normalizeEmail(email);
    if (await findUserByEmail(db, normalized)) throw BadRequest.field('email', `Email '${normalized}' is already taken.`);
    return deps.keys.sign(
      { sub: normalized, [OPERATOR_INVITATION_CLAIM]: true },
      { typ: VERIFICATION_TYP, expiresInSeconds: OPERATOR_INVITATION_LIFETIME_SECONDS },
    );
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
      const kdfOf = (k: NonNullable<typeof auth>['kdf']): KdfSettings => ({
        kdf: k.kdfType,
        iterations: k.iterations,
        memory: k.memory ?? null,
        parallelism: k.parallelism ?? null,
      });
      const unlockKdf = unlock ? kdfOf(unlock.kdf) : null;
      const authKdf = auth ? kdfOf(auth.kdf) : null;
      const kdf = unlockKdf ?? authKdf ?? flatKdf;
      if (!kdf) throw BadRequest.field('kdf', 'The kdf and kdfIterations fields are required.');
      for (const other of [authKdf, flatKdf]) {
        if (other && !sameKdf(other, kdf)) throw BadRequest.field('kdf', 'KDF settings must be equal for authentication and unlock.');
      }
      for (const [field, salt] of [
        ['masterPasswordAuthentication.salt', auth?.salt],
        ['masterPasswordUnlock.salt', unlock?.salt],
      ] as const) {
        if (salt !== undefined && normalizeEmail(salt) !== email) throw BadRequest.field(field, 'The salt must be the account email.');
      }
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
        kdf,
        invited,
        invitation: { token: body.orgInviteToken, organizationUserId: body.organizationUserId },
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
    async startRegistration(email: string, name: string | null, log: MailLog): Promise<{ token: string } | { mailed: true }> {
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
    async prelogin(email: string): Promise<{ kdf: KdfSettings; salt: string }> {
      const normalized = normalizeEmail(email);
      const user = await findUserByEmail(db, normalized);
      if (!user) return { kdf: DEFAULT_KDF, salt: normalized };
      return {
        kdf: { kdf: user.kdf, iterations: user.kdf_iterations, memory: user.kdf_memory, parallelism: user.kdf_parallelism },
        salt: user.master_password_salt ?? normalized,
      };
    },

    getUser: userOrThrow,

    async updateProfile(userId: string, changes: { name?: string | null; culture?: string | null; masterPasswordHint?: string | null; avatarColor?: string | null }) {
      const now = clock.now().toISOString();
      await updateUser(db, userId, {
        ...(changes.name !== undefined ? { name: changes.name?.trim() || null } : {}),
        ...(changes.culture ? { culture: changes.culture } : {}),
        ...(changes.masterPasswordHint !== undefined ? { master_password_hint: changes.masterPasswordHint || null } : {}),
        ...(changes.avatarColor !== undefined ? { avatar_color: changes.avatarColor } : {}),
        revision_date: now,
        account_revision_date: now,
      });
      return userOrThrow(userId);
    },

    /** `PUT /accounts/avatar`: the avatar colour (null: the default); the user's other apps sync settings. */
    async updateAvatar(userId: string, avatarColor: string | null): Promise<UserRow> {
      const now = clock.now().toISOString();
      await updateUser(db, userId, { avatar_color: avatarColor, revision_date: now, account_revision_date: now });
      deps.pushes.send(userPush(PushType.SyncSettings, userId, new Date(now)));
      return userOrThrow(userId);
    },

    /** Sets the account's key pair once; replacing it would make everything shared with it unreadable. */
    async setKeys(userId: string, publicKey: string, encryptedPrivateKey: string): Promise<UserRow> {
      const user = await userOrThrow(userId);
      requireEnc(encryptedPrivateKey, 'encryptedPrivateKey');
      if (user.public_key || user.private_key) {
        if (user.public_key === publicKey && user.private_key === encryptedPrivateKey) return user;
        throw new BadRequest('The account already has a key pair.');
      }
      const now = clock.now().toISOString();
      await updateUser(db, userId, { public_key: publicKey, private_key: encryptedPrivateKey, revision_date: now, account_revision_date: now });
      return userOrThrow(userId);
    },

    async changePassword(
      userId: string,
      body: { masterPasswordHash: string; newMasterPasswordHash: string; masterPasswordHint?: string | null; key: string },
      client: ClientContext,
    ): Promise<void> {
      const user = await userOrThrow(userId);
      await verifySecret(user, body.masterPasswordHash);
      requireEnc(body.key, 'key');
      const hash = await hasher.hash(body.newMasterPasswordHash);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await updateUser(tx, userId, {
          master_password_hash: hash,
          key: body.key,
          ...(body.masterPasswordHint !== undefined ? { master_password_hint: body.masterPasswordHint || null } : {}),
          security_stamp: randomUUID(),
          last_password_change_date: now,
          revision_date: now,
          account_revision_date: now,
          force_password_reset: false,
        });
        await deleteRefreshTokensOfUser(tx, userId);
        await deps.audit.record(tx, client, { type: EventType.User_ChangedPassword, userId, actingUserId: userId });
      });
      // Every other device logs out; the one that changed the password keeps its new tokens' session.
      deps.pushes.send(logOutPush(userId, client.deviceIdentifier));
    },

    /** "Log out of all sessions": every token issued so far stops working. */
    async rotateSecurityStamp(userId: string, masterPasswordHash: string | null | undefined): Promise<void> {
      const user = await userOrThrow(userId);
      await verifySecret(user, masterPasswordHash);
      await endSessions(user.id);
    },

    /** The operator's "deauthorize sessions" (admin console): the same as the user's own, without their password. */
    endSessions: async (userId: string) => endSessions((await userOrThrow(userId)).id),

    async apiKey(userId: string, masterPasswordHash: string | null | undefined, rotate: boolean): Promise<{ apiKey: string; revisionDate: string }> {
      const user = await userOrThrow(userId);
      await verifySecret(user, masterPasswordHash);
      if (!rotate) return { apiKey: user.api_key, revisionDate: user.revision_date };
      const apiKey = randomApiKey();
      const now = clock.now().toISOString();
      await updateUser(db, userId, { api_key: apiKey, revision_date: now });
      return { apiKey, revisionDate: now };
    },

    /** Dialogs that ask for the master password again (the web vault's export) check it here first. */
    async verifyPassword(userId: string, masterPasswordHash: string | null | undefined): Promise<void> {
      await verifySecret(await userOrThrow(userId), masterPasswordHash);
    },

    async deleteAccount(userId: string, masterPasswordHash: string | null | undefined): Promise<void> {
      const user = await userOrThrow(userId);
      await verifySecret(user, masterPasswordHash);
      await removeAccount(user);
    },

    removeAccount,
    setDisabled,
    operatorInvitationToken,
    inviteByOperator,
    /** For the operator's `users` command: every account, and one by email or id. */
    listUsers: () => listUsers(db),
    findUser: async (by: { email: string } | { id: string }) =>
      'id' in by ? findUserById(db, by.id.toLowerCase()) : findUserByEmail(db, normalizeEmail(by.email)),

    async setUserKeyId(userId: string, userKeyId: string): Promise<void> {
      await updateUser(db, userId, { user_key_id: userKeyId.toLowerCase() });
    },

    async publicKey(userId: string): Promise<{ userId: string; publicKey: string | null }> {
      const user = await userOrThrow(userId);
      return { userId: user.id, publicKey: user.public_key };
    },
  };
}

export type AccountService = ReturnType<typeof createAccountService>;
