import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Emergency access: a grantor names a trusted contact (the grantee) who may ask to view, or take
 * over, the grantor's vault after a wait the grantor chose. A row is an invitation by email
 * until the grantee accepts (then `grantee_id`), and holds the grantor's user key wrapped with
 * the grantee's public key once the grantor confirms. Both accounts' rows go with either account.
 */
export function emergencyAccess(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('emergency_access')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('grantor_id', 'text', (c) => c.notNull().references('users.id').onDelete('cascade'))
        .addColumn('grantee_id', 'text', (c) => c.references('users.id').onDelete('cascade'))
        // The invited address, kept until the grantee accepts.
        .addColumn('email', 'text')
        .addColumn('key_encrypted', 'text')
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('status', 'integer', (c) => c.notNull())
        .addColumn('wait_time_days', 'integer', (c) => c.notNull())
        .addColumn('recovery_initiated_date', t.timestamp)
        .addColumn('last_notification_date', t.timestamp)
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('emergency_access_grantor').on('emergency_access').column('grantor_id').execute();
      await db.schema.createIndex('emergency_access_grantee').on('emergency_access').column('grantee_id').execute();
      // An invitation not accepted yet is found by the invited address (the admin console's user page).
      await db.schema.createIndex('emergency_access_email').on('emergency_access').column('email').execute();
      // The reminder and timeout jobs look for grants waiting on a recovery.
      await db.schema.createIndex('emergency_access_status').on('emergency_access').columns(['status', 'recovery_initiated_date']).execute();
    },
  };
}
