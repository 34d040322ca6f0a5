import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Fast Secrets Manager reads.
 *
 * - `sm_revisions` counts every change to an organization's secrets and projects, exactly, so a
 *   listing, a machine sync or a get-by-ids answer can be reused while the count is unchanged
 *   (see secrets-manager/sm-answers.ts).
 * - A read of several secrets is one audit row naming a read set instead of one row per secret
 *   (see events/read-sets.ts): `secret_read_sets` holds each distinct list of secrets read once,
 *   named by a digest of the list, `secret_read_set_members` its secrets in the order read, and
 *   `events.read_set_id` the set an event stands for. The event log shows one Secret_Retrieved
 *   per secret of the set, as the official server records them. Like events, sets have no
 *   foreign keys: they outlive the secrets they name.
 */
export function secretReads(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('sm_revisions')
        .addColumn('organization_id', 'text', (c) => c.primaryKey().references('organizations.id').onDelete('cascade'))
        .addColumn('revision', t.bigint, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('secret_read_sets')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('size', 'integer', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('secret_read_set_members')
        .addColumn('read_set_id', 'text', (c) => c.notNull())
        .addColumn('position', 'integer', (c) => c.notNull())
        .addColumn('secret_id', 'text', (c) => c.notNull())
        .addPrimaryKeyConstraint('secret_read_set_members_pk', ['read_set_id', 'position'])
        .execute();
      await db.schema.createIndex('secret_read_set_members_secret').on('secret_read_set_members').columns(['secret_id', 'read_set_id']).execute();

      await db.schema.alterTable('events').addColumn('read_set_id', 'text').execute();
    },
  };
}
