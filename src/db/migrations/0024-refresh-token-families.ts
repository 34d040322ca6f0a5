import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Refresh tokens become reusable for a short grace window after their first use (two refreshes
 * racing with one token both succeed) and belong to a family, the chain of rotations from one
 * login, so that a reuse after the window can revoke the chain at once (platform/auth/tokens.ts).
 * Every existing token starts a family of its own and is still unused.
 */
export function refreshTokenFamilies(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('refresh_tokens')
        .addColumn('family_id', 'text', (c) => c.notNull().defaultTo(''))
        .execute();
      await db.schema.alterTable('refresh_tokens').addColumn('used_date', t.timestamp).execute();
      await sql`update refresh_tokens set family_id = token_hash`.execute(db);
      await db.schema.createIndex('refresh_tokens_family').on('refresh_tokens').column('family_id').execute();
    },
  };
}
