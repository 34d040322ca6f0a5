import { randomUUID } from 'node:crypto';
import { Type, type Static } from 'typebox';
import type { Executor } from '../../db/database.js';
import { isEncString } from '../../http/enc-string.js';
import { BadRequest, MODEL_STATE_INVALID } from '../../http/errors.js';
import { KeyIdString, Nullable } from '../../http/schemas.js';
import { validateKdf, type KdfSettings } from './kdf.js';
import { deleteRefreshTokensOfUser } from './tokens.repository.js';
import { updateUser, type UserRow } from './users.repository.js';

/**
 * The master password as the 2025–2026 clients send it (password change, KDF change, key
 * rotation, account recovery, emergency takeover): an authentication object, whose hash the
 * server stores, and an unlock object, whose wrapped user key it keeps, each naming the salt and
 * KDF it was made with. Those must agree with each other and with the account, as the official
 * `KdfSettingsValidator.ValidateKdfAndSaltAgreement` requires; and one writer sets a new master
 * password for every feature that does.
 */

const Int = Type.Integer();
const OptionalInt = Type.Optional(Nullable(Type.Integer()));

/** The official KdfRequestModel. */
export const KdfBody = Type.Object({ kdfType: Int, iterations: Int, memory: OptionalInt, parallelism: OptionalInt });
export type KdfBody = Static<typeof KdfBody>;

const Salt = Type.String({ minLength: 1, maxLength: 1000 });

/** MasterPasswordAuthenticationDataRequestModel. */
export const MasterPasswordAuthenticationBody = Type.Object({
  kdf: KdfBody,
  masterPasswordAuthenticationHash: Type.String({ minLength: 1, maxLength: 1000 }),
  salt: Salt,
});
export type MasterPasswordAuthenticationBody = Static<typeof MasterPasswordAuthenticationBody>;

/** MasterPasswordUnlockDataRequestModel. */
export const MasterPasswordUnlockBody = Type.Object({
  kdf: KdfBody,
  masterKeyWrappedUserKey: Type.String({ minLength: 1, maxLength: 10_000 }),
  salt: Salt,
  /** The key id of the user key inside (clients of 2026.8 on): checked against the account's. */
  containedKeyId: Type.Optional(Nullable(KeyIdString)),
});
export type MasterPasswordUnlockBody = Static<typeof MasterPasswordUnlockBody>;

export function kdfOf(body: KdfBody): KdfSettings {
  return { kdf: body.kdfType, iterations: body.iterations, memory: body.memory ?? null, parallelism: body.parallelism ?? null };
}

export function sameKdf(a: KdfSettings, b: KdfSettings): boolean {
  return a.kdf === b.kdf && a.iterations === b.iterations && (a.memory ?? null) === (b.memory ?? null) && (a.parallelism ?? null) === (b.parallelism ?? null);
}

/** The account's KDF settings as stored. */
export function accountKdf(user: Pick<UserRow, 'kdf' | 'kdf_iterations' | 'kdf_memory' | 'kdf_parallelism'>): KdfSettings {
  return { kdf: user.kdf, iterations: user.kdf_iterations, memory: user.kdf_memory, parallelism: user.kdf_parallelism };
}

/** The salt the account's master key is derived with: the stored one, or the lower-cased email. */
export function accountSalt(user: Pick<UserRow, 'master_password_salt' | 'email'>): string {
  return user.master_password_salt ?? user.email.trim().toLowerCase();
}

/**
 * The one salt rule of every flow (registration, password and KDF changes, recovery): the
 * client's salt must be exactly the account's, with no folding of case or spaces, as the
 * official `ValidateSaltUnchangedForUser` compares it. A master key made with any other string
 * would not match the salt prelogin answers, and the account could not log in again.
 */
export function requireAccountSalt(salt: string, expected: string, field: string): void {
  if (salt !== expected) throw BadRequest.field(field, "The salt is not the account's.");
}

/** A new master password both objects agree on. */
export interface AgreedMasterPassword {
  kdf: KdfSettings;
  /** The client's authentication hash, not yet hashed by the server. */
  authenticationHash: string;
  wrappedUserKey: string;
}

/**
 * Checks that the authentication and unlock objects name the same salt and KDF, that the salt is
 * the account's, that the KDF is within the official bounds and, unless `kdfMayChange` (the KDF
 * change itself), that it is the account's current one, and that the wrapped user key is an
 * EncString. Each refusal is a 400 naming the field
 * (`prefix` is where the objects sit in the body, e.g. `unlockData`).
 */
export function agreedMasterPassword(
  user: Pick<UserRow, 'master_password_salt' | 'email' | 'kdf' | 'kdf_iterations' | 'kdf_memory' | 'kdf_parallelism'> & Partial<Pick<UserRow, 'user_key_id'>>,
  authentication: MasterPasswordAuthenticationBody,
  unlock: MasterPasswordUnlockBody,
  fields: { authentication: string; unlock: string; kdfMayChange?: boolean },
): AgreedMasterPassword {
  const kdf = kdfOf(unlock.kdf);
  if (!sameKdf(kdfOf(authentication.kdf), kdf)) {
    throw BadRequest.field(`${fields.unlock}.kdf`, 'KDF settings must be equal for authentication and unlock.');
  }
  if (authentication.salt !== unlock.salt) throw BadRequest.field(`${fields.unlock}.salt`, 'Salt must be equal for authentication and unlock.');
  requireAccountSalt(unlock.salt, accountSalt(user), `${fields.unlock}.salt`);
  // The validated settings are the ones stored: PBKDF2 keeps no memory or parallelism.
  const valid = validateKdf(kdf, `${fields.unlock}.kdf`);
  if (!fields.kdfMayChange && !sameKdf(valid, accountKdf(user))) {
    throw BadRequest.field(`${fields.unlock}.kdf`, "The KDF settings are not the account's; change them with POST /accounts/kdf.");
  }
  // The server cannot open the wrapped key, but it can refuse what no client could ever unwrap.
  const wrapped = `${fields.unlock}.masterKeyWrappedUserKey`;
  if (!isEncString(unlock.masterKeyWrappedUserKey)) throw BadRequest.field(wrapped, `The ${wrapped} field is not a valid encrypted string.`);
  // As the official ValidateKeyIdUnchangedForUser: compared only when both the client and the account name one.
  if (unlock.containedKeyId && user.user_key_id && unlock.containedKeyId.toLowerCase() !== user.user_key_id) {
    throw BadRequest.field(`${fields.unlock}.containedKeyId`, 'Invalid user key sent in in master-password unlock data.');
  }
  return { kdf: valid, authenticationHash: authentication.masterPasswordAuthenticationHash, wrappedUserKey: unlock.masterKeyWrappedUserKey };
}

/** A new master password in either form the clients send (password change, account recovery, emergency takeover). */
export interface NewMasterPasswordBody {
  authenticationData?: MasterPasswordAuthenticationBody | null;
  unlockData?: MasterPasswordUnlockBody | null;
  newMasterPasswordHash?: string | null;
  key?: string | null;
}

/** The official MasterPasswordPayloadVariantValidator's refusal, word for word. */
export const NO_NEW_MASTER_PASSWORD = 'Must provide either new payloads (UnlockData/AuthenticationData) or legacy payloads (NewMasterPasswordHash/Key).';

/** Whether the body carries a complete new master password in either form. */
export function hasNewMasterPassword(body: NewMasterPasswordBody): boolean {
  return Boolean((body.authenticationData && body.unlockData) || (body.newMasterPasswordHash && body.key));
}

/** The refusal of a body with neither form complete, on the four fields, as the official model state names them. */
export function noNewMasterPassword(): BadRequest {
  const fields = ['authenticationData', 'unlockData', 'newMasterPasswordHash', 'key'];
  return new BadRequest(MODEL_STATE_INVALID, Object.fromEntries(fields.map((field) => [field, [NO_NEW_MASTER_PASSWORD]])));
}

/**
 * The new master password of a body, as the official MasterPasswordPayloadVariantValidator reads
 * it: the two objects when both are there (checked by agreedMasterPassword, the KDF unchanged),
 * else the obsolete `newMasterPasswordHash` and `key` when both are (a lone object beside them is
 * not read), else refused.
 */
export function newMasterPasswordOf(user: Parameters<typeof agreedMasterPassword>[0], body: NewMasterPasswordBody): AgreedMasterPassword {
  if (body.authenticationData && body.unlockData) {
    return agreedMasterPassword(user, body.authenticationData, body.unlockData, { authentication: 'authenticationData', unlock: 'unlockData' });
  }
  if (!body.newMasterPasswordHash || !body.key) throw noNewMasterPassword();
  if (!isEncString(body.key)) throw BadRequest.field('key', 'The key field is not a valid encrypted string.');
  return { kdf: accountKdf(user), authenticationHash: body.newMasterPasswordHash, wrappedUserKey: body.key };
}

/** Where a body keeps the parts of the KDF and the salt, to name the one a refusal is about. */
export interface KeptKdfFields {
  kdf: { kdfType: string; iterations: string; memory: string; parallelism: string };
  salt: string;
  /** Where the unlock object sits, for the authentication and unlock objects' disagreement. */
  unlock: string;
}

/**
 * A new master password made with the account's current KDF and salt, as the key rotation
 * requires (the official rotation only checks the KDF is unchanged). Unlike agreedMasterPassword
 * it does not hold the KDF to today's bounds: an account made when the minimum was lower keeps its
 * settings and may still rotate; changing them is `POST /accounts/kdf`'s job, which checks them.
 */
export function masterPasswordKeepingKdf(
  user: Pick<UserRow, 'master_password_salt' | 'email' | 'kdf' | 'kdf_iterations' | 'kdf_memory' | 'kdf_parallelism'>,
  authentication: MasterPasswordAuthenticationBody,
  unlock: MasterPasswordUnlockBody,
  fields: KeptKdfFields,
): AgreedMasterPassword {
  const kdf = kdfOf(unlock.kdf);
  const account = accountKdf(user);
  const changed =
    kdf.kdf !== account.kdf
      ? 'kdfType'
      : kdf.iterations !== account.iterations
        ? 'iterations'
        : kdf.memory !== (account.memory ?? null)
          ? 'memory'
          : kdf.parallelism !== (account.parallelism ?? null)
            ? 'parallelism'
            : null;
  if (changed) throw BadRequest.field(fields.kdf[changed], "The KDF settings must stay the account's; change them first with POST /accounts/kdf.");
  if (!sameKdf(kdfOf(authentication.kdf), kdf)) throw BadRequest.field(`${fields.unlock}.kdf`, 'KDF settings must be equal for authentication and unlock.');
  if (authentication.salt !== unlock.salt) throw BadRequest.field(fields.salt, 'Salt must be equal for authentication and unlock.');
  if (unlock.salt !== accountSalt(user)) throw BadRequest.field(fields.salt, "The email or salt must stay the account's.");
  return { kdf: account, authenticationHash: authentication.masterPasswordAuthenticationHash, wrappedUserKey: unlock.masterKeyWrappedUserKey };
}

/** What a new master password changes on the account. */
export interface NewMasterPassword {
  /** The server-side hash of the client's authentication hash (PasswordHasher.hash), made before the transaction. */
  serverHash: string;
  /** The user key wrapped with the new master key. */
  key: string;
  /** New KDF settings (the KDF change, a takeover); left out, they stay. */
  kdf?: KdfSettings;
  /** Left out, the hint stays; null or empty clears it. */
  hint?: string | null;
  /** True when an admin set it: the member must choose their own at next login. */
  forcePasswordReset: boolean;
  /**
   * Whether the password itself is new (the default). The KDF change passes false: the official
   * ChangeKdfCommand leaves LastPasswordChangeDate alone, as the password is the same.
   */
  passwordChanged?: boolean;
  /**
   * The first master password of an account that had none (provisioned by SSO): the session
   * that set it goes on, as the official SetInitialMasterPassword leaves the security stamp.
   */
  keepSessions?: boolean;
  now: string;
}

/**
 * The one writer of a new master password: stores it, rotates the security stamp and deletes
 * every refresh token, so every session ends (access tokens carry the stamp), unless it is the
 * account's first (`keepSessions`). Run it inside the
 * caller's transaction with its audit event; after the commit the caller sends the LogOut push.
 */
export async function setMasterPassword(tx: Executor, userId: string, change: NewMasterPassword): Promise<void> {
  await updateUser(tx, userId, {
    master_password_hash: change.serverHash,
    key: change.key,
    ...(change.kdf
      ? { kdf: change.kdf.kdf, kdf_iterations: change.kdf.iterations, kdf_memory: change.kdf.memory, kdf_parallelism: change.kdf.parallelism }
      : {}),
    ...(change.hint !== undefined ? { master_password_hint: change.hint || null } : {}),
    ...(change.keepSessions ? {} : { security_stamp: randomUUID() }),
    ...(change.passwordChanged === false ? {} : { last_password_change_date: change.now }),
    revision_date: change.now,
    account_revision_date: change.now,
    force_password_reset: change.forcePasswordReset,
  });
  if (!change.keepSessions) await deleteRefreshTokensOfUser(tx, userId);
}
