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

/** True when this call removed the token (so only one of two racing refreshes wins). */
export async function consumeRefreshToken(db: Executor, tokenHash: string): Promise<boolean> {
  const result = await db.deleteFrom('refresh_tokens').where('token_hash', '=', tokenHash).executeTakeFirst();
  return Number(result.numDeletedRows) === 1;
}

export async function deleteRefreshTokensOfUser(db: Executor, userId: string): Promise<void> {
  await db.deleteFrom('refresh_tokens').where('user_id', '=', userId).execute();
}

export async function deleteExpiredRefreshTokens(db: Executor, now: string): Promise<void> {
  await db.deleteFrom('refresh_tokens').where('expiration_date', '<', now).execute();
}
