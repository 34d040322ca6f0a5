import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * The audit log read at scale, its retention, and security tasks.
 *
 * - Every event-log page is a range scan of one index, newest first: the organization's log
 *   (organization_id, date, seq), a member's or a user's own events (acting_user_id,
 *   organization_id, date, seq: `organization_id IS NULL` for the user's own log), and an
 *   item's (cipher_id, date, seq). `seq` breaks ties between events of the same date and is
 *   the continuation token's second half. They replace the (column, date) indexes of
 *   0001-foundation. There is deliberately no index on `date` alone: PostgreSQL would pick it
 *   for a page and then sort every event sharing a date (a batch of client events can share
 *   one) by `seq`; retention walks `seq` instead. `events_read_set` finds whether a read set
 *   is still named by an event.
 * - `leases` holds named, expiring leases: one instance of a fleet prunes old events at a
 *   time (see events/retention.ts).
 * - `security_tasks`: the official SecurityTask (type 0 UpdateAtRiskCredential, status 0
 *   Pending / 1 Completed), one organization item each.
 */
export function eventsAndTasks(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      for (const name of ['events_organization_date', 'events_user_date', 'events_cipher_date']) {
        await db.schema.dropIndex(name).execute();
      }
      await db.schema.createIndex('events_organization_page').on('events').columns(['organization_id', 'date', 'seq']).execute();
      await db.schema.createIndex('events_acting_user_page').on('events').columns(['acting_user_id', 'organization_id', 'date', 'seq']).execute();
      await db.schema.createIndex('events_cipher_page').on('events').columns(['cipher_id', 'date', 'seq']).execute();
      await db.schema
        .createIndex('events_read_set')
        .on('events')
        .column('read_set_id')
        .where(sql.ref('read_set_id'), 'is not', null)
        .execute();

      await db.schema
        .createTable('leases')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('holder', 'text', (c) => c.notNull())
        .addColumn('expires_at', t.timestamp, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('security_tasks')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('cipher_id', 'text', (c) => c.references('ciphers.id').onDelete('cascade'))
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('security_tasks_organization').on('security_tasks').columns(['organization_id', 'status']).execute();
      await db.schema.createIndex('security_tasks_cipher').on('security_tasks').column('cipher_id').execute();
    },
  };
}
