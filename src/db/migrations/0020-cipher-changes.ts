import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Which of a user's personal items changed since the user's last sync, without listing them
 * all: each personal item's row records in `change` a mark of the write that last changed it,
 * such that a write committing after a sync took its mark M (vault/revisions.ts, changeMark)
 * stamps its rows above M. Sync keeps a user's vault section with the mark taken before it was
 * built; the first sync after a change reads only the rows stamped above it (an index on user
 * and change) and patches the section (vault/section-items.ts).
 * - PostgreSQL: the stamp is the writing transaction's id, set by a trigger before every insert
 *   and update (no lock taken); the mark is the oldest transaction still running when the sync
 *   starts, less one: every transaction below it has ended, every one that commits later has an
 *   id at or above it. The same rule orders the event relay (migration 0013). The trigger also
 *   takes over moving `version` (0019's trigger is replaced).
 * - SQLite: writers are serialised by the database, so a write reads the owner's vault revision
 *   as the last committed write left it; the stamp is that revision plus one (touchVault moves
 *   the revision itself in the same transaction), and the mark is the revision a sync read. The
 *   repository's writes set `version` and `change` themselves (ciphers.repository.ts,
 *   rowChange), so a row is written once; triggers stamp only the writes that did not (another
 *   release's code, a hand-made update), as 0019's trigger did for `version`, which is replaced
 *   by one that moves both.
 * Organization items (no owner) are stamped too; migration 0021 stamps them from a counter on
 * SQLite and lets their members' syncs read them this way as well.
 */
export function cipherChanges(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.alterTable('ciphers').addColumn('change', t.bigint, (c) => c.notNull().defaultTo(0)).execute();
      if (engine === 'postgres') {
        await sql`drop trigger ciphers_version on ciphers`.execute(db);
        await sql`drop function ciphers_next_version()`.execute(db);
        await sql`create function ciphers_stamp() returns trigger language plpgsql as $$
          begin
            if tg_op = 'UPDATE' then new.version := old.version + 1; end if;
            new.change := pg_current_xact_id()::text::bigint;
            return new;
          end $$`.execute(db);
        await sql`create trigger ciphers_stamp before insert or update on ciphers for each row execute function ciphers_stamp()`.execute(db);
      } else {
        const stamp = sql.raw(`coalesce((select revision from vault_revisions where user_id = new.user_id), 0) + 1`);
        await sql`drop trigger ciphers_version`.execute(db);
        // The triggers' own updates move `version` and set `change`, so neither trigger runs again.
        await sql`create trigger ciphers_version after update on ciphers for each row when new.version = old.version
          begin update ciphers set version = old.version + 1, change = ${stamp} where id = new.id; end`.execute(db);
        await sql`create trigger ciphers_stamp after insert on ciphers for each row when new.change = 0 and new.user_id is not null
          begin update ciphers set version = new.version + 1, change = ${stamp} where id = new.id; end`.execute(db);
      }
      await db.schema.createIndex('ciphers_user_changes').on('ciphers').columns(['user_id', 'change']).execute();
    },
  };
}
