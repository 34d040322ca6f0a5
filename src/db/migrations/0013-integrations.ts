import { sql, type Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Forwarding events to an organization's integrations (see features/integrations).
 *
 * - `organization_integrations` and `organization_integration_configurations`: the official
 *   OrganizationIntegration and OrganizationIntegrationConfiguration, one integration per type
 *   and organization, any number of configurations (event type, filters, template) under it.
 * - `integration_relay`: the outbox relay's stored cursor and the lease that lets one instance
 *   of a fleet relay at a time.
 * - `integration_dead_letters`: deliveries that failed every retry, parked until an owner
 *   replays them.
 * - `events.tx` (PostgreSQL only): the id of the transaction that wrote the event. Sequence
 *   numbers are taken before commit, so a later seq may commit first; the relay reads only
 *   events of finished transactions (`tx` below the oldest running one) in (tx, seq) order and
 *   so never passes over an event that commits late. SQLite writes one transaction at a time:
 *   there, seq order is commit order.
 */
export function integrations(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      await db.schema
        .createTable('organization_integrations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('type', 'integer', (c) => c.notNull())
        .addColumn('configuration', t.json)
        .addColumn('signing_secret', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .addUniqueConstraint('organization_integrations_org_type', ['organization_id', 'type'])
        .execute();

      await db.schema
        .createTable('organization_integration_configurations')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_integration_id', 'text', (c) => c.notNull().references('organization_integrations.id').onDelete('cascade'))
        .addColumn('event_type', 'integer')
        .addColumn('configuration', t.json)
        .addColumn('filters', t.json)
        .addColumn('template', 'text')
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex('organization_integration_configurations_integration')
        .on('organization_integration_configurations')
        .column('organization_integration_id')
        .execute();

      await db.schema
        .createTable('integration_relay')
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('cursor_seq', t.bigint, (c) => c.notNull())
        .addColumn('cursor_tx', 'text')
        .addColumn('lease_owner', 'text')
        .addColumn('lease_until', t.timestamp)
        .execute();

      await db.schema
        .createTable('integration_dead_letters')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('integration_id', 'text', (c) => c.notNull())
        .addColumn('configuration_id', 'text', (c) => c.notNull())
        .addColumn('integration_type', 'integer', (c) => c.notNull())
        .addColumn('message_id', 'text', (c) => c.notNull())
        .addColumn('event_type', 'integer', (c) => c.notNull())
        .addColumn('body', 'text', (c) => c.notNull())
        .addColumn('attempts', 'integer', (c) => c.notNull())
        .addColumn('last_error', 'text', (c) => c.notNull())
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .execute();
      await db.schema.createIndex('integration_dead_letters_org').on('integration_dead_letters').columns(['organization_id', 'creation_date']).execute();

      if (engine === 'postgres') {
        // Existing rows take the migration's own transaction id: all of them finished before any later one.
        await sql`alter table events add column tx xid8 not null default pg_current_xact_id()`.execute(db);
        await sql`create index events_tx_seq on events (tx, seq)`.execute(db);
      }
    },
  };
}
