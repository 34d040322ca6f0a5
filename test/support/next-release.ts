import type { Kysely, Migration } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { migrations } from '../../src/db/migrations/index.js';

/**
 * "The next release" of the migration compatibility test (src/db/migration-compatibility.test.ts):
 * this code's migrations plus one that expands the schema as docs/operations.md allows (a new
 * table, a nullable column, a NOT NULL column with a default, an index), altering one existing
 * table only (two can deadlock with a request).
 */
export const NEXT = '9000-next-release';

const expand: Migration = {
  async up(db: Kysely<unknown>) {
    // The strongest lock on the altered table first: a weaker one taken before (a foreign key's)
    // and raised later deadlocks with a request reading and then writing it.
    await db.schema.alterTable('folders').addColumn('color', 'text').execute();
    await db.schema.alterTable('folders').addColumn('next_flags', 'integer', (c) => c.notNull().defaultTo(0)).execute();
    await db.schema.createIndex('folders_color_idx').on('folders').column('color').execute();
    await db.schema
      .createTable('next_release_labels')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('folder_id', 'text', (c) => c.notNull().references('folders.id').onDelete('cascade'))
      .addColumn('label', 'text', (c) => c.notNull())
      .execute();
  },
};

export const nextRelease = (engine: Database['engine']) => ({ ...migrations(engine), [NEXT]: expand });
