import type { Executor } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { Clock } from '../../shared/clock.js';
import { findUserById, type UserRow } from './users.repository.js';
import type { PasswordHasher } from './password-hasher.js';
import { USER_VERIFICATION_PURPOSE, useOneTimeCode } from './one-time-codes.js';

/**
 * The official SecretVerificationRequestModel: the master password hash (as `secret` or
 * `masterPasswordHash`) or a one-time code (`otp`) mailed by `POST /accounts/request-otp`.
 */
export interface SecretVerificationBody {
  secret?: string | null;
  masterPasswordHash?: string | null;
  otp?: string | null;
}

/** The codes request-otp mails are six digits; a master password hash never is. */
const ONE_TIME_CODE = /^\s*\d{6}\s*$/;

/**
 * The official VerifySecretAsync: the secret is the master password hash when it is the
 * account's, or else an unexpired one-time code mailed for user verification (the only way for an
 * account without a master password, and allowed beside one, for users logged in with trusted
 * devices). A code is spent when it matches.
 */
export async function secretMatches(db: Executor, hasher: PasswordHasher, clock: Clock, user: Pick<UserRow, 'id' | 'master_password_hash'>, body: SecretVerificationBody): Promise<boolean> {
  // As officially, one secret: the master password hash when sent, the code otherwise.
  const secret = body.secret || body.masterPasswordHash || body.otp;
  if (!secret) return false;
  if (await masterPasswordMatches(hasher, user, secret)) return true;
  return ONE_TIME_CODE.test(secret) && useOneTimeCode(db, clock.now(), user.id, USER_VERIFICATION_PURPOSE, secret);
}

/**
 * Checks the caller's secret (secretMatches) before a destructive action (deleting an
 * organization, purging a vault); a wrong or missing one throws `refusal` (each route answers
 * its own 400). Answers the user's row, which some callers need next.
 */
export async function verifySecret(db: Executor, hasher: PasswordHasher, clock: Clock, userId: string, body: SecretVerificationBody, refusal: () => BadRequest): Promise<UserRow> {
  const user = await findUserById(db, userId);
  if (!user) throw new NotFound();
  if (!(await secretMatches(db, hasher, clock, user, body))) throw refusal();
  return user;
}

/** Whether `hash` is the user's master password hash (a missing one is not). */
export async function masterPasswordMatches(hasher: PasswordHasher, user: Pick<UserRow, 'master_password_hash'>, hash: string | null | undefined): Promise<boolean> {
  return Boolean(hash) && (await hasher.verify(hash as string, user.master_password_hash));
}

/**
 * The account's own commands that change the master password or what it protects (password,
 * KDF, email) check the current master password hash first, as the official CheckPasswordAsync
 * (no one-time code): a wrong or missing one is the official 400 `masterPasswordHash: Invalid password.`.
 */
export async function requireMasterPassword(hasher: PasswordHasher, user: Pick<UserRow, 'master_password_hash'>, hash: string | null | undefined): Promise<void> {
  if (!(await masterPasswordMatches(hasher, user, hash))) throw BadRequest.field('masterPasswordHash', 'Invalid password.');
}

/**
 * The account's commands the official server guards with VerifySecretAsync (log out everywhere,
 * the API key, new-device verification, deletion): the master password hash or a one-time code;
 * wrong or missing, the same 400 as requireMasterPassword.
 */
export async function requireSecret(db: Executor, hasher: PasswordHasher, clock: Clock, user: Pick<UserRow, 'id' | 'master_password_hash'>, body: SecretVerificationBody): Promise<void> {
  if (!(await secretMatches(db, hasher, clock, user, body))) throw BadRequest.field('masterPasswordHash', 'Invalid password.');
}
