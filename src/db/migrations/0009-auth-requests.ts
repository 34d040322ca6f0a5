import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Log in with a device: a new device asks (anonymously, by email) to be let in, one of the
 * user's logged-in devices approves it by sending the user key encrypted to the asking
 * device's public key, and the asking device then logs in once with its access code. Rows go
 * with their user. Admin-approved organization requests are not offered, so no organization
 * column.
 */
export function authRequests(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('auth_requests')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('request_device_identifier', 'text', (c) => c.notNull())
        .addColumn('request_device_type', 'integer', (c) => c.notNull())
        .addColumn('request_ip_address', 'text')
        .addColumn('response_device_id', 'text', (c) => c.references('devices.id').onDelete('set null'))
        .addColumn('access_code', 'text', (c) => c.notNull())
        .addColumn('public_key', 'text', (c) => c.notNull())
        .addColumn('key', 'text')
        .addColumn('master_password_hash', 'text')
        .addColumn('approved', t.bool)
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('response_date', t.timestamp)
        .addColumn('authentication_date', t.timestamp)
        .execute();
      await db.schema.createIndex('auth_requests_user_created').on('auth_requests').columns(['user_id', 'creation_date']).execute();
    },
  };
}
