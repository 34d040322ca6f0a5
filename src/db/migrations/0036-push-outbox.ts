import type { Kysely } from 'kysely';

/**
 * The push outbox (features/push-delivery): what the mobile push relay and Web Push still have to
 * send, kept after the change committed and sent by a background worker, so a slow or
 * unreachable push service never holds a request. One row per message and channel; a row is
 * deleted once sent, refused for good, or out of attempts. `next_attempt_at` orders the work and
 * doubles as a claim: a worker moves it ahead before sending, so no two workers send one row.
 */
export function pushOutbox() {
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('push_outbox')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('channel', 'text', (c) => c.notNull())
        .addColumn('message', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('next_attempt_at', 'text', (c) => c.notNull())
        .addColumn('created_at', 'text', (c) => c.notNull())
        .addColumn('last_error', 'text')
        .execute();
      await db.schema.createIndex('push_outbox_due').on('push_outbox').columns(['channel', 'next_attempt_at', 'id']).execute();
    },
  };
}
