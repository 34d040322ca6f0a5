import { sql, type Kysely } from 'kysely';

/**
 * Why a member was revoked (the official RevocationReason: 1 by a member manager, 2 the Two-step
 * login policy, 3 declining the data ownership policy), which the 2026 web vaults show beside a
 * revoked member. Members revoked before this was recorded get 0, the official "unknown".
 */
export function revocationReasons() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('organization_users').addColumn('revocation_reason', 'integer').execute();
      await sql`update organization_users set revocation_reason = 0 where status = -1`.execute(db);
    },
  };
}
