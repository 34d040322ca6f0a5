import { randomUUID } from 'node:crypto';
import type { Selectable } from 'kysely';
import type { Clock } from '../../shared/clock.js';
import type { Db, Executor } from '../../db/database.js';
import type { OrganizationReportsTable } from '../../db/schema.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { usesRiskInsights } from '../organizations/plans.js';
import type { MemberCaller } from '../../platform/access/org-access.js';

export type OrganizationReport = Selectable<OrganizationReportsTable>;
/** What a summary read answers of a report. */
export type ReportSummary = Pick<OrganizationReport, 'summary_data' | 'content_encryption_key' | 'revision_date'>;

/**
 * The twelve report metrics: their names in the official request (`metrics`) and the column
 * each is stored in.
 */
export const REPORT_METRICS = {
  totalApplicationCount: 'application_count',
  totalAtRiskApplicationCount: 'application_at_risk_count',
  totalCriticalApplicationCount: 'critical_application_count',
  totalCriticalAtRiskApplicationCount: 'critical_application_at_risk_count',
  totalMemberCount: 'member_count',
  totalAtRiskMemberCount: 'member_at_risk_count',
  totalCriticalMemberCount: 'critical_member_count',
  totalCriticalAtRiskMemberCount: 'critical_member_at_risk_count',
  totalPasswordCount: 'password_count',
  totalAtRiskPasswordCount: 'password_at_risk_count',
  totalCriticalPasswordCount: 'critical_password_count',
  totalCriticalAtRiskPasswordCount: 'critical_password_at_risk_count',
} as const satisfies Record<string, keyof OrganizationReportsTable>;

export type ReportMetricName = keyof typeof REPORT_METRICS;
export type ReportMetrics = Partial<Record<ReportMetricName, number | null>>;

export interface NewReport {
  reportData?: string | null;
  contentEncryptionKey?: string | null;
  summaryData?: string | null;
  applicationData?: string | null;
  metrics?: ReportMetrics | null;
}

const blank = (value: string | null | undefined): value is null | undefined | '' => value === null || value === undefined || value.trim() === '';

/** The metric columns of a request's `metrics`: a counter left out is stored as null, as the official server does. */
function metricColumns(metrics: ReportMetrics | null | undefined) {
  return Object.fromEntries(Object.entries(REPORT_METRICS).map(([name, column]) => [column, metrics?.[name as ReportMetricName] ?? null])) as Record<
    (typeof REPORT_METRICS)[ReportMetricName],
    number | null
  >;
}

/** A report's stored metrics under their official names. */
function metricsOf(report: OrganizationReport): Record<ReportMetricName, number | null> {
  return Object.fromEntries(Object.entries(REPORT_METRICS).map(([name, column]) => [name, report[column]])) as Record<ReportMetricName, number | null>;
}

/** The official OrganizationReportResponseModel, with the stored metrics beside it (`metrics`, ours). */
function toReportResponse(report: OrganizationReport) {
  return {
    id: report.id,
    organizationId: report.organization_id,
    reportData: report.report_data,
    contentEncryptionKey: report.content_encryption_key,
    summaryData: report.summary_data,
    applicationData: report.application_data,
    reportFile: null,
    reportFileDownloadUrl: null,
    fileUploadType: null,
    creationDate: report.creation_date,
    revisionDate: report.revision_date,
    metrics: metricsOf(report),
  };
}

function toSummaryResponse(report: ReportSummary) {
  return { encryptedData: report.summary_data ?? '', encryptionKey: report.content_encryption_key, date: report.revision_date };
}

/**
 * The official plan check of the organization reports (UseRiskInsights): 400 for an organization
 * whose plan has none. Answers the organization's row for what a report reads of it.
 */
export async function requireReportsPlan(db: Executor, organizationId: string) {
  const org = await db.selectFrom('organizations').select(['plan_type', 'use_reset_password']).where('id', '=', organizationId).executeTakeFirst();
  if (!org || !usesRiskInsights(org.plan_type)) throw new BadRequest("Your organization's plan does not support this feature.");
  return org;
}

/**
 * Organization reports, as the official reports routes keep them: the client computes a report
 * of the organization's applications, members and passwords at risk, encrypts it under a content
 * key it wraps with the organization key, and sends it with twelve counters in the clear; the
 * server stores and answers them, and never reads the encrypted parts.
 */
export function createReports({ db, clock }: { db: Db; clock: Clock }) {
  const requirePlan = async (organizationId: string): Promise<void> => {
    await requireReportsPlan(db, organizationId);
  };

  /** 404 when there is no report `reportId`, 400 when it is another organization's (as the official server). */
  function mustBeOurs<T extends { organization_id: string }>(organizationId: string, reportId: string, report: T | undefined): T {
    if (!report) throw new NotFound(`No report found for Id: ${reportId}`);
    if (report.organization_id !== organizationId) throw new BadRequest('Invalid report ID');
    return report;
  }

  /** The organization's report `reportId`, whole. */
  async function reportOf(organizationId: string, reportId: string): Promise<OrganizationReport> {
    return mustBeOurs(organizationId, reportId, await db.selectFrom('organization_reports').selectAll().where('id', '=', reportId).executeTakeFirst());
  }

  return {
    requirePlan,

    /** Adds a report; every encrypted part is required, as the official AddOrganizationReportCommand has it. */
    async add({ membership }: MemberCaller, body: NewReport) {
      const { organizationId } = membership;
      await requirePlan(organizationId);
      if (blank(body.contentEncryptionKey)) throw BadRequest.field('contentEncryptionKey', 'Content Encryption Key is required');
      if (blank(body.reportData)) throw BadRequest.field('reportData', 'Report Data is required');
      if (blank(body.summaryData)) throw BadRequest.field('summaryData', 'Summary Data is required');
      if (blank(body.applicationData)) throw BadRequest.field('applicationData', 'Application Data is required');
      const now = clock.now().toISOString();
      const report: OrganizationReport = {
        id: randomUUID(),
        organization_id: organizationId,
        report_data: body.reportData,
        content_encryption_key: body.contentEncryptionKey,
        summary_data: body.summaryData,
        application_data: body.applicationData,
        creation_date: now,
        revision_date: now,
        ...metricColumns(body.metrics),
      };
      await db.insertInto('organization_reports').values(report).execute();
      return toReportResponse(report);
    },

    /** The organization's report revised last; 404 when it has none. */
    async latest({ membership }: MemberCaller) {
      const { organizationId } = membership;
      await requirePlan(organizationId);
      const report = await db
        .selectFrom('organization_reports')
        .selectAll()
        .where('organization_id', '=', organizationId)
        .orderBy('revision_date', 'desc')
        .orderBy('id', 'desc')
        .limit(1)
        .executeTakeFirst();
      if (!report) throw new NotFound(`No report found for organization: ${organizationId}`);
      return toReportResponse(report);
    },

    async get({ membership }: MemberCaller, reportId: string) {
      await requirePlan(membership.organizationId);
      return toReportResponse(await reportOf(membership.organizationId, reportId));
    },

    /** A report's summary alone, with its key and revision date. */
    async summary({ membership }: MemberCaller, reportId: string) {
      await requirePlan(membership.organizationId);
      return toSummaryResponse(await reportOf(membership.organizationId, reportId));
    },

    /** A report's application data alone. */
    async applicationData({ membership }: MemberCaller, reportId: string) {
      await requirePlan(membership.organizationId);
      return { applicationData: (await reportOf(membership.organizationId, reportId)).application_data };
    },

    async remove({ membership }: MemberCaller, reportId: string): Promise<void> {
      const { organizationId } = membership;
      await requirePlan(organizationId);
      // Only whose it is: the encrypted parts need not be read to delete them.
      mustBeOurs(organizationId, reportId, await db.selectFrom('organization_reports').select('organization_id').where('id', '=', reportId).executeTakeFirst());
      await db.deleteFrom('organization_reports').where('id', '=', reportId).execute();
    },

    /**
     * The summaries of the reports revised within [startDate, endDate], whole days (UTC) at both
     * ends, newest first: what the web app charts over time.
     */
    async summariesBetween({ membership }: MemberCaller, startDate: Date, endDate: Date) {
      const { organizationId } = membership;
      await requirePlan(organizationId);
      if (startDate.getTime() > endDate.getTime()) throw BadRequest.field('startDate', 'StartDate must be earlier than or equal to EndDate');
      const from = new Date(Date.UTC(startDate.getUTCFullYear(), startDate.getUTCMonth(), startDate.getUTCDate()));
      const until = new Date(Date.UTC(endDate.getUTCFullYear(), endDate.getUTCMonth(), endDate.getUTCDate() + 1));
      // The summaries only: the reports' other encrypted parts can be large.
      const summaries: ReportSummary[] = await db
        .selectFrom('organization_reports')
        .select(['summary_data', 'content_encryption_key', 'revision_date'])
        .where('organization_id', '=', organizationId)
        .where('revision_date', '>=', from.toISOString())
        .where('revision_date', '<', until.toISOString())
        .where('summary_data', 'is not', null)
        .orderBy('revision_date', 'desc')
        .execute();
      return summaries.map(toSummaryResponse);
    },

    /** Replaces a report's summary and its twelve metrics (a metric left out becomes null). */
    async updateSummary({ membership }: MemberCaller, reportId: string, summaryData: string | null | undefined, metrics: ReportMetrics | null | undefined) {
      const { organizationId } = membership;
      await requirePlan(organizationId);
      if (blank(summaryData)) throw BadRequest.field('summaryData', 'Summary Data is required');
      const report = await reportOf(organizationId, reportId);
      const changes = { summary_data: summaryData, revision_date: clock.now().toISOString(), ...metricColumns(metrics) };
      await db.updateTable('organization_reports').set(changes).where('id', '=', reportId).execute();
      return toReportResponse({ ...report, ...changes });
    },

    /** Replaces a report's application data. */
    async updateApplicationData({ membership }: MemberCaller, reportId: string, applicationData: string | null | undefined) {
      const { organizationId } = membership;
      await requirePlan(organizationId);
      if (blank(applicationData)) throw BadRequest.field('applicationData', 'Application Data is required');
      const report = await reportOf(organizationId, reportId);
      const changes = { application_data: applicationData, revision_date: clock.now().toISOString() };
      await db.updateTable('organization_reports').set(changes).where('id', '=', reportId).execute();
      return toReportResponse({ ...report, ...changes });
    },
  };
}

export type Reports = ReturnType<typeof createReports>;
