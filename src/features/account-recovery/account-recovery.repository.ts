import type { Executor } from '../../db/database.js';

/** Members of the organization among `ids` who have an account, with what their recovery details need, in one query. */
export async function membersWithAccounts(db: Executor, organizationId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('organization_users as ou')
    .innerJoin('users as u', 'u.id', 'ou.user_id')
    .select(['ou.id', 'ou.type', 'ou.reset_password_key', 'u.email', 'u.master_password_salt', 'u.kdf', 'u.kdf_iterations', 'u.kdf_memory', 'u.kdf_parallelism'])
    .where('ou.organization_id', '=', organizationId)
    .where('ou.id', 'in', ids)
    .orderBy('ou.id')
    .execute();
}

export type MemberWithAccount = Awaited<ReturnType<typeof membersWithAccounts>>[number];

/**
 * The account, locked for the rest of the transaction (`select … for update` on PostgreSQL; on
 * SQLite the transaction already holds the database), so a recovery's checks and its write see
 * the same row.
 */
export async function lockUser(tx: Executor, id: string) {
  return tx.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The membership, locked likewise (after the account, always in that order). */
export async function lockMember(tx: Executor, organizationId: string, id: string) {
  return tx.selectFrom('organization_users').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).forUpdate().executeTakeFirst();
}
