import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

export function foundation(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('users')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => c.notNull().unique())
        .addColumn('name', 'text')
        .addColumn('email_verified', t.bool, (c) => c.notNull())
        .addColumn('master_password_hash', 'text')
        .addColumn('master_password_hint', 'text')
        .addColumn('master_password_salt', 'text')
        .addColumn('key', 'text')
        .addColumn('public_key', 'text')
        .addColumn('private_key', 'text')
        .addColumn('kdf', 'integer', (c) => c.notNull())
        .addColumn('kdf_iterations', 'integer', (c) => c.notNull())
        .addColumn('kdf_memory', 'integer')
        .addColumn('kdf_parallelism', 'integer')
        .addColumn('security_stamp', 'text', (c) => c.notNull())
        .addColumn('api_key', 'text', (c) => c.notNull())
        .addColumn('user_key_id', 'text')
        .addColumn('premium', t.bool, (c) => c.notNull())
        .addColumn('culture', 'text', (c) => c.notNull())
        .addColumn('avatar_color', 'text')
        .addColumn('equivalent_domains', t.json)
        .addColumn('excluded_global_equivalent_domains', t.json)
        .addColumn('force_password_reset', t.bool, (c) => c.notNull())
        .addColumn('verify_devices', t.bool, (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addColumn('account_revision_date', t.timestamp, (c) => c.notNull())
        .addColumn('last_password_change_date', t.timestamp)
        .execute();

      await db.schema
        .createTable('devices')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('identifier', 'text', (c) => c.notNull())
        .addColumn('name', 'text', (c) => c.notNull())
        .addColumn('push_token', 'text')
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addUniqueConstraint('devices_user_identifier', ['user_id', 'identifier'])
        .execute();

      // Audit events are immutable records: no foreign keys, so they outlive what they describe.
      await db.schema
        .createTable('events')
        .addColumn('seq', engine === 'postgres' ? 'bigserial' : 'integer', (c) =>
          engine === 'postgres' ? c.primaryKey() : c.primaryKey().autoIncrement(),
        )
        .addColumn('id', 'text', (c) => c.notNull().unique())
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('user_id', 'text')
        .addColumn('organization_id', 'text')
        .addColumn('cipher_id', 'text')
        .addColumn('collection_id', 'text')
        .addColumn('policy_id', 'text')
        .addColumn('group_id', 'text')
        .addColumn('organization_user_id', 'text')
        .addColumn('acting_user_id', 'text')
        .addColumn('secret_id', 'text')
        .addColumn('project_id', 'text')
        .addColumn('service_account_id', 'text')
        .addColumn('device_type', 'integer')
        .addColumn('ip_address', 'varchar(50)')
        .addColumn('system_user', 'integer')
        .addColumn('date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('events_organization_date').on('events').columns(['organization_id', 'date']).execute();
      await db.schema.createIndex('events_user_date').on('events').columns(['user_id', 'date']).execute();
      await db.schema.createIndex('events_cipher_date').on('events').columns(['cipher_id', 'date']).execute();
    },
  };
}
