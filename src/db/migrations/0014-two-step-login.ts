import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Two-step login (see features/two-factor):
 *
 * - `two_factor_providers`: a user's providers (TwoFactorProviderType), each with its settings
 *   as a JSON document (the authenticator key, the email address) and, for the authenticator,
 *   the last time step used, so each code logs in once.
 * - `two_factor_recovery`: the hash of the user's recovery code (the code itself is shown once).
 * - `one_time_codes`: emailed codes (two-step login, email setup, email change, verification),
 *   one per user and purpose, stored hashed with their expiry and wrong tries.
 * - `two_factor_remember_tokens`: "remember this device" tokens, hashed, bound to a device and
 *   to the security stamp they were issued under.
 */
export function twoStepLogin(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('two_factor_providers')
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('enabled', t.bool, (c) => c.notNull())
        .addColumn('metadata', t.json, (c) => c.notNull())
        .addColumn('last_used_step', t.bigint)
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('two_factor_providers_pk', ['user_id', 'type'])
        .execute();

      await db.schema
        .createTable('two_factor_recovery')
        .addColumn('user_id', 'text', (c) => c.primaryKey().references('users.id').onDelete('cascade'))
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .execute();

      await db.schema
        .createTable('one_time_codes')
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('purpose', 'text', (c) => c.notNull())
        .addColumn('code_hash', 'text', (c) => c.notNull())
        .addColumn('target', 'text')
        .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addPrimaryKeyConstraint('one_time_codes_pk', ['user_id', 'purpose'])
        .execute();

      await db.schema
        .createTable('two_factor_remember_tokens')
        .addColumn('token_hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('device_id', 'text', (c) => c.notNull().references('devices.id').onDelete('cascade'))
        .addColumn('security_stamp', 'text', (c) => c.notNull())
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('two_factor_remember_tokens_user').on('two_factor_remember_tokens').column('user_id').execute();
    },
  };
}
