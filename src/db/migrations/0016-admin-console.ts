import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * The operator's admin console (src/features/admin):
 *
 * - `admin_sessions`: one row per signed-in browser, keyed by the SHA-256 of its cookie (the
 *   cookie itself is never stored), with the session's CSRF token and its end. Kept in the
 *   database so that every instance of a fleet knows every session.
 * - `admin_events`: the instance audit log of what operators did in the console (sign-ins,
 *   refused sign-ins, every action), with the operator's address. Organization audit events
 *   stay in `events`; these concern the instance and name no acting user.
 */
export function adminConsole(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('admin_sessions')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('csrf_token', 'text', (c) => c.notNull())
        .addColumn('ip_address', 'text')
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('expiration_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('admin_sessions_expiration').on('admin_sessions').column('expiration_date').execute();

      await db.schema
        .createTable('admin_events')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('date', t.timestamp, (c) => c.notNull())
        .addColumn('action', 'text', (c) => c.notNull())
        .addColumn('target_type', 'text')
        .addColumn('target_id', 'text')
        .addColumn('detail', 'text')
        .addColumn('ip_address', 'text')
        .execute();
      await db.schema.createIndex('admin_events_date').on('admin_events').columns(['date', 'id']).execute();
    },
  };
}
