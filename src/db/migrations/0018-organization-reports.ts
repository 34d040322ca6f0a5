import type { Kysely } from 'kysely';
import { columnTypes, type Engine } from '../dialect.js';

/**
 * Organization reports (the official OrganizationReport of the reports routes): the client's
 * encrypted report, summary and application data under the content encryption key it sends,
 * and the twelve report metrics stored beside them in the clear. One organization keeps every
 * report it adds; the latest is the one revised last, found, like the summaries of a date range,
 * by a range scan of `organization_reports_revision`.
 */
export function organizationReports(engine: Engine) {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      let table = db.schema
        .createTable('organization_reports')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('organization_id', 'text', (c) => c.notNull().references('organizations.id').onDelete('cascade'))
        .addColumn('report_data', 'text', (c) => c.notNull())
        .addColumn('content_encryption_key', 'text', (c) => c.notNull())
        .addColumn('summary_data', 'text')
        .addColumn('application_data', 'text')
        .addColumn('creation_date', t.timestamp, (c) => c.notNull())
        .addColumn('revision_date', t.timestamp, (c) => c.notNull());
      for (const column of REPORT_METRIC_COLUMNS) table = table.addColumn(column, 'integer');
      await table.execute();
      await db.schema.createIndex('organization_reports_revision').on('organization_reports').columns(['organization_id', 'revision_date']).execute();
    },
  };
}

/** The twelve metric columns, as the migration made them; never change this list (add a migration). */
const REPORT_METRIC_COLUMNS = [
  'application_count',
  'application_at_risk_count',
  'critical_application_count',
  'critical_application_at_risk_count',
  'member_count',
  'member_at_risk_count',
  'critical_member_count',
  'critical_member_at_risk_count',
  'password_count',
  'password_at_risk_count',
  'critical_password_count',
  'critical_password_at_risk_count',
] as const;
