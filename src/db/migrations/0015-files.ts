import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Files: item attachments and Send.
 * - Attachments reuse `ciphers.attachments` (0003-vault): one JSON document per item, keyed by
 *   attachment id, as Bitwarden keeps it. What a user's personal attachments take counts in
 *   `users.storage_bytes` (organizations already have `storage_bytes`), kept in the same
 *   transaction as the attachment it counts, so a quota check is one conditional update.
 * - `sends` holds text and file Sends; the encrypted name, notes, text or file metadata are one
 *   JSON document in `data`, as for items. Send events name their Send in `events.send_id`.
 */
export function files(engine: Engine) {
  const t = columnTypes(engine);
  const no = engine === 'postgres' ? sql`false` : sql`0`;
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .alterTable('users')
        .addColumn('storage_bytes', t.bigint, (c) => c.notNull().defaultTo(0))
        .execute();

      await db.schema.alterTable('events').addColumn('send_id', 'text').execute();

      await db.schema
        .createTable('sends')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('data', t.json, (c) => c.notNull())
        .addColumn('key', 'text', (c) => c.notNull())
        .addColumn('password_hash', 'text')
        .addColumn('max_access_count', 'integer')
        .addColumn('access_count', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('disabled', t.bool, (c) => c.notNull().defaultTo(no))
        .addColumn('hide_email', t.bool, (c) => c.notNull().defaultTo(no))
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addColumn('expiration_date', t.timestamp)
        .addColumn('deletion_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('sends_user').on('sends').column('user_id').execute();
      await db.schema.createIndex('sends_deletion_date').on('sends').column('deletion_date').execute();
    },
  };
}
