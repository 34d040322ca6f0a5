import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * An operator can disable an account (`strongroom users disable`): it keeps its data but
 * cannot log in. Existing rows are enabled, hence the default.
 */
export function userDisabled(engine: Engine) {
  const t = columnTypes(engine);
  // SQLite stores booleans as 0/1; a literal `false` default is PostgreSQL's spelling only.
  const enabled = engine === 'postgres' ? sql`false` : sql`0`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('disabled', t.bool, (c) => c.notNull().defaultTo(enabled))
        .execute();
    },
  };
}
