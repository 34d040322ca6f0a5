import type { Insertable, Selectable } from 'kysely';
import type { RefreshTokensTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';

export type RefreshTokenRow = Selectable<RefreshTokensTable>;

export async function insertRefreshToken(db: Executor, row: Insertable<RefreshTokensTable>): Promise<void> {
  await db.insertInto('refresh_tokens').values(row).execute();
}

export async function findRefreshToken(db: Executor, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/**
 * Marks the token used, once: true for the call that made the first use (so two racing
 * refreshes agree which one came first), false when it was used already.
 */
export async function markRefreshTokenUsed(db: Executor, tokenHash: string, now: string): Promise<boolean> {
  const result = await db.updateTable('refresh_tokens').set({ used_date: now }).where('token_hash', '=', tokenHash).where('used_date', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function deleteRefreshToken(db: Executor, tokenHash: string): Promise<void> {
  await db.deleteFrom('refresh_tokens').where('token_hash', '=', tokenHash).execute();
}

/** Revokes every token of one chain of rotations. */
export async function deleteRefreshTokenFamily(db: Executor, familyId: string): Promise<number> {
  const result = await db.deleteFrom('refresh_tokens').where('family_id', '=', familyId).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteRefreshTokensOfUser(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('refresh_tokens').where('user_id', '=', userId).execute();
}

export async function deleteExpiredRefreshTokens(db: Executor, now: string): Promise<void> {
  await db.deleteFrom('refresh_tokens').where('expiration_date', '<', now).execute();
}
