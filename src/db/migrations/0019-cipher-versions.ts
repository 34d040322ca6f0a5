import { sql, type Kysely } from 'kysely';
import type { Engine } from '../dialect.js';

/**
 * A version per item that moves with every change to its row, whoever makes it: sync keeps
 * each item's encoded shared part (vault/item-json-cache.ts) under its id and version, and a
 * listing of ids and versions tells which of those are still current. The database moves the
 * version (a trigger on every update) so that no write path, in this instance or another,
 * can change an item and leave its encoded copy current; revision dates cannot do this, as
 * some changes keep them (attachment uploads, the row lock) and two changes may share one.
 *
 * A covering index lets the listing of a user's personal items read ids and versions without
 * the large `data` rows; it starts with `user_id`, so it replaces the index on `user_id` alone
 * (one index fewer to write on every item write).
 */
export function cipherVersions(engine: Engine) {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('ciphers').addColumn('version', 'integer', (c) => c.notNull().defaultTo(0)).execute();
      if (engine === 'postgres') {
        await sql`create function ciphers_next_version() returns trigger language plpgsql as $$
          begin new.version := old.version + 1; return new; end $$`.execute(db);
        await sql`create trigger ciphers_version before update on ciphers for each row execute function ciphers_next_version()`.execute(db);
      } else {
        // The trigger's own update does not run it again (recursive_triggers is off by default,
        // and the `when` stops it were it on).
        await sql`create trigger ciphers_version after update on ciphers for each row when new.version = old.version
          begin update ciphers set version = old.version + 1 where id = new.id; end`.execute(db);
      }
      await db.schema.createIndex('ciphers_user_versions').on('ciphers').columns(['user_id', 'id', 'version', 'type']).execute();
      await db.schema.dropIndex('ciphers_user').execute();
    },
  };
}
