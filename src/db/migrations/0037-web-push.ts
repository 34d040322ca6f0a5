import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Self-hosted Web Push for the browser extension (#44, docs/notifications.md): the server's VAPID key
 * pair, one row made by whichever instance starts first (a fleet shares it through the
 * database), and each device's push subscription, gone with the device.
 */
export function webPush(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('web_push_keys')
        // Always 1: the primary key makes a second key pair impossible, whichever instance inserts.
        .addColumn('id', 'integer', (c) => c.primaryKey())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('private_key', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createTable('web_push_subscriptions')
        .addColumn('device_id', 'text', (c) => c.primaryKey().references('devices.id').onDelete('cascade'))
        .addColumn('endpoint', 'text', (c) => c.notNull())
        .addColumn('p256dh', 'text', (c) => c.notNull())
        .addColumn('auth', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
    },
  };
}
