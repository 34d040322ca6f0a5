import type { Executor } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { findUserById, type UserRow } from './users.repository.js';
import type { PasswordHasher } from './password-hasher.js';

/** The official SecretVerificationRequestModel: the master password hash, as `secret` or `masterPasswordHash`. */
export interface SecretVerificationBody {
  secret?: string | null;
  masterPasswordHash?: string | null;
}

/**
 * Checks the caller's master password hash before a destructive action (deleting an
 * organization, purging a vault); a wrong or missing one throws `refusal` (each route answers
 * its own 400). One-time codes are not offered: this server does not mail them for this purpose.
 * Answers the user's row, which some callers need next.
 */
export async function verifyMasterPassword(db: Executor, hasher: PasswordHasher, userId: string, body: SecretVerificationBody, refusal: () => BadRequest): Promise<UserRow> {
  const user = await findUserById(db, userId);
  if (!user) throw new NotFound();
  if (!(await masterPasswordMatches(hasher, user, body.secret || body.masterPasswordHash))) throw refusal();
  return user;
}

/** Whether `hash` is the user's master password hash (a missing one is not). */
export async function masterPasswordMatches(hasher: PasswordHasher, user: Pick<UserRow, 'master_password_hash'>, hash: string | null | undefined): Promise<boolean> {
  return Boolean(hash) && (await hasher.verify(hash as string, user.master_password_hash));
}

/**
 * The account's own commands that change security settings (password, KDF, email, API key, log
 * out everywhere, deletion) check the current master password hash first: a wrong or missing
 * one is the official 400 `masterPasswordHash: Invalid password.`.
 */
export async function requireMasterPassword(hasher: PasswordHasher, user: Pick<UserRow, 'master_password_hash'>, hash: string | null | undefined): Promise<void> {
  if (!(await masterPasswordMatches(hasher, user, hash))) throw BadRequest.field('masterPasswordHash', 'Invalid password.');
}
