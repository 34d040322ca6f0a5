import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * The personal vault, shaped for organization-owned items from the start:
 * - `ciphers` belong to a user (personal) or to an organization (`organization_id`; its
 *   foreign key arrives with the organizations table). The encrypted content is one JSON
 *   document in `data`, as Bitwarden keeps it, so a new field needs no migration.
 * - Folder, favorite and archive are each user's own view of an item, so they live in
 *   `cipher_user_settings`, one row per (user, cipher), not in the shared cipher row.
 * - `vault_revisions` counts every change to what a user's sync carries (folders, items,
 *   settings), exactly, so a sync answer can be reused while the count is unchanged.
 * - `collection_ciphers` places organization items in collections. Its collection foreign key
 *   also arrives with the collections table; nothing writes here until then.
 */
export function vault(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('folders')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('folders_user').on('folders').column('user_id').execute();

      await db.schema
        .createTable('ciphers')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
        .addColumn('organization_id', 'text')
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('data', t.json, (c) => c.notNull())
        .addColumn('key', 'text')
        .addColumn('reprompt', 'integer', (c) => c.notNull())
        .addColumn('attachments', t.json)
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addColumn('deleted_date', t.timestamp)
        .addCheckConstraint('ciphers_has_owner', sql`user_id is not null or organization_id is not null`)
        .execute();
      await db.schema.createIndex('ciphers_user').on('ciphers').column('user_id').execute();
      await db.schema.createIndex('ciphers_organization').on('ciphers').column('organization_id').execute();

      await db.schema
        .createTable('cipher_user_settings')
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('cipher_id', 'text', (c) => c.notNull().references('ciphers.id').onDelete('cascade'))
        .addColumn('folder_id', 'text', (c) => c.references('folders.id').onDelete('set null'))
        .addColumn('favorite', t.bool, (c) => c.notNull())
        .addColumn('archived_date', t.timestamp)
        .addPrimaryKeyConstraint('cipher_user_settings_pk', ['user_id', 'cipher_id'])
        .execute();
      await db.schema.createIndex('cipher_user_settings_cipher').on('cipher_user_settings').column('cipher_id').execute();
      await db.schema.createIndex('cipher_user_settings_folder').on('cipher_user_settings').column('folder_id').execute();

      await db.schema
        .createTable('vault_revisions')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .addColumn('revision', t.bigint, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('collection_ciphers')
        .addColumn('collection_id', 'text', (c) => c.notNull())
        .addColumn('cipher_id', 'text', (c) => c.notNull().references('ciphers.id').onDelete('cascade'))
        .addPrimaryKeyConstraint('collection_ciphers_pk', ['collection_id', 'cipher_id'])
        .execute();
      await db.schema.createIndex('collection_ciphers_cipher').on('collection_ciphers').column('cipher_id').execute();
    },
  };
}
