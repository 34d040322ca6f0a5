import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Executor } from '../../db/database.js';

/*
 * Whether users have a second step of login turned on: read by the two-step-login policy and
 * by the member lists, below the two-step-login feature that sets it up.
 */

/** The users among `userIds` with at least one enabled provider. */
export async function usersWithTwoFactor(db: Executor, userIds: readonly string[]): Promise<Set<string>> {
  if (userIds.length === 0) return new Set();
  const rows = await db.selectFrom('two_factor_providers').select('user_id').distinct().where('user_id', 'in', userIds).where('enabled', '=', true).execute();
  return new Set(rows.map((r) => r.user_id));
}

/**
 * "Two-step login is on" for the user a query's row names (`users.id` unless told another
 * column): any enabled provider. A correlated EXISTS, so a listing reads it in its own query
 * (sync's profile, the profile, member lists, the admin console's users). The one rule: only
 * providers this server offers can be turned on.
 */
export function twoFactorOn(userIdColumn: 'users.id' | 'organization_users.user_id' = 'users.id'): RawBuilder<SqlBool> {
  return sql<SqlBool>`exists (select 1 from two_factor_providers where two_factor_providers.user_id = ${sql.ref(userIdColumn)} and two_factor_providers.enabled = ${sql.lit(true)})`;
}
