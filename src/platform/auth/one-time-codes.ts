import { createHash } from 'node:crypto';
import type { Executor } from '../../db/database.js';
import { safeEqual } from '../../shared/constant-time.js';

/**
 * Using the six-digit codes the server mails (features/two-factor/mailed-codes.ts sends them):
 * stored hashed in one_time_codes, one per user and purpose, each good once, until its time and
 * CODE_TRIES wrong tries are up. Here, below the features, because checking a code for user
 * verification (secret-verification.ts) is shared by every feature that asks for the secret.
 */

export const CODE_TRIES = 5;

/** The purpose of the codes `POST /accounts/request-otp` mails: user verification without a master password. */
export const USER_VERIFICATION_PURPOSE = 'user-verification';

export const codeHash = (userId: string, purpose: string, code: string) => createHash('sha256').update(`${userId}\n${purpose}\n${code}`).digest('base64url');

/** Uses a code: deleted only if it is still the same one, so it works once. */
export async function takeCode(db: Executor, userId: string, purpose: string, hash: string): Promise<boolean> {
  const result = await db.deleteFrom('one_time_codes').where('user_id', '=', userId).where('purpose', '=', purpose).where('code_hash', '=', hash).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

/**
 * Spends one try of the live code in one statement, so concurrent guesses cannot all read the
 * same count: answers the code's hash and target while a try was left, nothing when the code is
 * gone, past its time (`now`) or past its `tries`.
 */
async function spendCodeTry(db: Executor, userId: string, purpose: string, now: string, tries: number): Promise<{ code_hash: string; target: string | null } | undefined> {
  return db
    .updateTable('one_time_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where('attempts', '<', tries)
    .where('expiration_date', '>', now)
    .returning(['code_hash', 'target'])
    .executeTakeFirst();
}

/** Forgets a code past its time or tries; a live one (a new code mailed meanwhile) stays. */
async function deleteDeadCode(db: Executor, userId: string, purpose: string, now: string, tries: number): Promise<void> {
  await db
    .deleteFrom('one_time_codes')
    .where('user_id', '=', userId)
    .where('purpose', '=', purpose)
    .where((eb) => eb.or([eb('attempts', '>=', tries), eb('expiration_date', '<=', now)]))
    .execute();
}

/**
 * Uses a code: right, unexpired at `now`, sent to `target` when given, and within its tries. A
 * wrong code counts a try; a code past its time or tries is gone. With `keep`, a right code is
 * only checked (it counts a try) and stays for its use.
 */
export async function useOneTimeCode(db: Executor, now: Date, userId: string, purpose: string, code: string, target?: string, keep = false): Promise<boolean> {
  const at = now.toISOString();
  // The try is spent before the comparison, so concurrent guesses get at most CODE_TRIES checks.
  const live = await spendCodeTry(db, userId, purpose, at, CODE_TRIES);
  if (!live) {
    await deleteDeadCode(db, userId, purpose, at, CODE_TRIES);
    return false;
  }
  const hash = codeHash(userId, purpose, code.trim());
  if (!safeEqual(hash, live.code_hash) || (target !== undefined && live.target !== target)) return false;
  return keep || takeCode(db, userId, purpose, hash);
}
