import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

export function identity(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      // Keys the server signs with; generated once and shared by every instance.
      await db.schema
        .createTable('server_keys')
        .addColumn('purpose', 'text', (c) => c.primaryKey())
        .addColumn('kid', 'text', (c) => c.notNull())
        .addColumn('private_jwk', t.json, (c) => c.notNull())
        .addColumn('public_jwk', t.json, (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .execute();

      // Only a hash of each refresh token is kept; the stamp it was issued under must still match.
      await db.schema
        .createTable('refresh_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('device_id', 'text', (c) => c.references('devices.id').onDelete('cascade'))
        .addColumn('client_id', 'text', (c) => c.notNull())
        .addColumn('scope', 'text', (c) => c.notNull())
        .addColumn('security_stamp', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('refresh_tokens_user').on('refresh_tokens').column('user_id').execute();
    },
  };
}
