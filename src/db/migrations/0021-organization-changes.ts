import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Which organization items changed for a member since their last sync, without listing them
 * all (migration 0020 did this for personal items): every write that changes what a member's
 * sync shows of an organization item leaves a stamp above the mark of any sync that started
 * before it (vault/revisions.ts, changeMarks), so that sync can keep a section for members with
 * organization collections too and patch it with what changed (vault/sync-vault.ts).
 * - The item rows (`ciphers.change` of organization items, an index on organization and change):
 *   PostgreSQL stamps every row with its transaction's id already (0020). SQLite has no such id
 *   and no owner revision for them: a one-row counter, `change_clock`, stands in; an
 *   organization item is stamped one above it and the counter follows the stamp (a trigger),
 *   so a sync's mark is the counter it reads. Writers are serialised, so a write committing
 *   after that read stamps above it. A stamp at or below the counter (written by an older
 *   release, which stamps organization items with 1) is raised above it by the same trigger.
 *   (The table exists on PostgreSQL too, unused, so that the repository's stamp expression is
 *   the same on both engines; the trigger replaces it there.)
 * - Collection assignments (`collection_ciphers` inserted or deleted) change an item's collection
 *   ids and who reaches it: a trigger stamps the item. The places of a collection deleted are
 *   not stamped (deleteCollections deletes the collection first): every member
 *   who reached it has a different section key, and no one else sees a change. That keeps a
 *   collection's deletion from writing, and on PostgreSQL locking, every item it held.
 * - An item deleted for good leaves no row to stamp: a trigger stamps its organization in
 *   `organization_item_removals`, and a sync that sees such a stamp lists the ids it reaches to
 *   find what left.
 * - Per-user settings (`cipher_user_settings`: folder, favorite, archive) change one member's
 *   view only: each row gets its own `change`, stamped like a personal item (PostgreSQL: the
 *   transaction id; SQLite: the user's vault revision plus one, touchVault moving the revision
 *   in the same transaction), with an index on user and change.
 * Grants, memberships and the organizations' flags are not stamped: a section is kept under a
 * key holding them, and a different key rebuilds it.
 */
export function organizationChanges(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema.createTable('change_clock').addColumn('id', 'integer', (c) => c.primaryKey()).addColumn('value', t.bigint, (c) => c.notNull()).execute();
      await sql`insert into change_clock (id, value) select 0, coalesce(max(change), 0) from ciphers where user_id is null`.execute(db);
      await db.schema
        .createTable('organization_item_removals')
        .addColumn('organization_id', 'text', (c) => c.primaryKey())
        .addColumn('change', t.bigint, (c) => c.notNull())
        .execute();
      await db.schema.alterTable('cipher_user_settings').addColumn('change', t.bigint, (c) => c.notNull().defaultTo(0)).execute();

      if (engine === 'postgres') {
        await sql`create function cipher_user_settings_stamp() returns trigger language plpgsql as $$
          begin new.change := pg_current_xact_id()::text::bigint; return new; end $$`.execute(db);
        await sql`create trigger cipher_user_settings_stamp before insert or update on cipher_user_settings
          for each row execute function cipher_user_settings_stamp()`.execute(db);
        // Any update of the item runs ciphers_stamp (0020), which stamps it with this transaction.
        // Not for the places of a deleted collection (see above).
        await sql`create function collection_ciphers_stamp() returns trigger language plpgsql as $$
          begin
            if tg_op = 'DELETE' then
              update ciphers set change = 0 where id = old.cipher_id and exists (select 1 from collections where id = old.collection_id);
            else
              update ciphers set change = 0 where id = new.cipher_id;
            end if;
            return null;
          end $$`.execute(db);
        await sql`create trigger collection_ciphers_stamp after insert or delete on collection_ciphers
          for each row execute function collection_ciphers_stamp()`.execute(db);
        // Once per statement, however many items it deletes (a bulk delete, an organization's
        // removal). The row it locks adds no wait: every write of an organization's items
        // already updates all its members' revision dates in the same transaction.
        await sql`create function organization_item_removed() returns trigger language plpgsql as $$
          begin
            insert into organization_item_removals (organization_id, change)
              select distinct organization_id, pg_current_xact_id()::text::bigint from gone where organization_id is not null
              on conflict (organization_id) do update set change = excluded.change;
            return null;
          end $$`.execute(db);
        await sql`create trigger organization_item_removed after delete on ciphers referencing old table as gone
          for each statement execute function organization_item_removed()`.execute(db);
      } else {
        const counter = `(select value from change_clock where id = 0)`;
        const clock = `${counter} + 1`;
        const stamp = sql.raw(`case when new.user_id is null then ${clock} else coalesce((select revision from vault_revisions where user_id = new.user_id), 0) + 1 end`);
        // 0020's triggers, now stamping organization items from the counter.
        await sql`drop trigger ciphers_version`.execute(db);
        await sql`drop trigger ciphers_stamp`.execute(db);
        await sql`create trigger ciphers_version after update on ciphers for each row when new.version = old.version
          begin update ciphers set version = old.version + 1, change = ${stamp} where id = new.id; end`.execute(db);
        await sql`create trigger ciphers_stamp after insert on ciphers for each row when new.change = 0
          begin update ciphers set version = new.version + 1, change = ${stamp} where id = new.id; end`.execute(db);
        // The counter follows the stamps of organization items, whichever statement set them; a
        // stamp at or below it (an older release stamps organization items with 1) is first
        // raised above it. One trigger per event, so that the raise comes before the following
        // whatever order SQLite fires triggers in; the raise does not fire it again (recursive
        // triggers are off), so the following reads the row's stamp as it is after the raise.
        const stamped = `(select change from ciphers where id = new.id)`;
        const raiseThenFollow = sql.raw(`
          update ciphers set version = version + 1, change = ${clock} where id = new.id and new.change <> 0 and new.change <= ${counter};
          update change_clock set value = ${stamped} where id = 0 and value < ${stamped};`);
        await sql`create trigger change_clock_insert after insert on ciphers for each row when new.user_id is null begin ${raiseThenFollow} end`.execute(db);
        await sql`create trigger change_clock_update after update of change on ciphers for each row when new.user_id is null begin ${raiseThenFollow} end`.execute(db);
        const touch = (id: string) => sql.raw(`update ciphers set version = version + 1, change = ${clock} where id = ${id} and user_id is null`);
        await sql`create trigger collection_ciphers_insert after insert on collection_ciphers for each row begin ${touch('new.cipher_id')}; end`.execute(db);
        await sql`create trigger collection_ciphers_delete after delete on collection_ciphers for each row
          when exists (select 1 from collections where id = old.collection_id) begin ${touch('old.cipher_id')}; end`.execute(db);
        await sql`create trigger organization_item_removed after delete on ciphers for each row when old.organization_id is not null
          begin
            insert into organization_item_removals (organization_id, change) values (old.organization_id, ${sql.raw(clock)})
              on conflict (organization_id) do update set change = excluded.change;
            update change_clock set value = value + 1 where id = 0;
          end`.execute(db);
        const settingsStamp = sql.raw(`coalesce((select revision from vault_revisions where user_id = new.user_id), 0) + 1`);
        await sql`create trigger cipher_user_settings_insert after insert on cipher_user_settings for each row
          begin update cipher_user_settings set change = ${settingsStamp} where user_id = new.user_id and cipher_id = new.cipher_id; end`.execute(db);
        await sql`create trigger cipher_user_settings_update after update on cipher_user_settings for each row when new.change = old.change
          begin update cipher_user_settings set change = ${settingsStamp} where user_id = new.user_id and cipher_id = new.cipher_id; end`.execute(db);
      }
      await db.schema.createIndex('ciphers_organization_changes').on('ciphers').columns(['organization_id', 'change']).execute();
      await db.schema.dropIndex('ciphers_organization').execute();
      await db.schema.createIndex('cipher_user_settings_changes').on('cipher_user_settings').columns(['user_id', 'change']).execute();
    },
  };
}
