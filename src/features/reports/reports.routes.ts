import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { BadRequest } from '../../http/errors.js';
import { EmptyResponse, emptyOk, Guid, Nullable, NullableEncString, OrgParams } from '../../http/schemas.js';
import { memberCaller, type OrgAccess } from '../../platform/access/org-access.js';
import { REPORT_METRICS, type Reports } from './reports.service.js';

const tags = ['Reports'];

/** Encrypted parts can be as long as the body limit allows: a report covers every item of the organization. */
const PART = 100_000_000;

const Metric = Type.Optional(Nullable(Type.Integer({ minimum: 0 })));
const MetricsBody = Type.Object(Object.fromEntries(Object.keys(REPORT_METRICS).map((name) => [name, Metric])) as Record<keyof typeof REPORT_METRICS, typeof Metric>, {
  description: 'The twelve report metrics, in the clear; one left out is stored as null.',
});
const MetricValue = Nullable(Type.Integer());
const MetricsResponse = Type.Object(Object.fromEntries(Object.keys(REPORT_METRICS).map((name) => [name, MetricValue])) as Record<keyof typeof REPORT_METRICS, typeof MetricValue>);

const AddReportBody = Type.Object({
  reportData: NullableEncString(PART),
  contentEncryptionKey: NullableEncString(PART),
  summaryData: NullableEncString(PART),
  applicationData: NullableEncString(PART),
  metrics: Type.Optional(Nullable(MetricsBody)),
  fileSize: Type.Optional(Nullable(Type.Integer({ minimum: 0, description: 'Accepted and ignored: this server keeps reports inline, as the official server without file storage does.' }))),
});
const SummaryBody = Type.Object({ summaryData: NullableEncString(PART), metrics: Type.Optional(Nullable(MetricsBody)) });
const ApplicationDataBody = Type.Object({ applicationData: NullableEncString(PART) });

/** The official OrganizationReportResponseModel, with the stored metrics beside it (`metrics`, ours). */
const ReportResponse = Type.Object({
  id: Type.String(),
  organizationId: Type.String(),
  reportData: Nullable(Type.String()),
  contentEncryptionKey: Nullable(Type.String()),
  summaryData: Nullable(Type.String()),
  applicationData: Nullable(Type.String()),
  reportFile: Type.Null({ description: 'Always null: reports are kept inline' }),
  reportFileDownloadUrl: Type.Null(),
  fileUploadType: Type.Null(),
  creationDate: Type.String(),
  revisionDate: Type.String(),
  metrics: MetricsResponse,
});
const SummaryResponse = Type.Object({ encryptedData: Type.String(), encryptionKey: Type.String(), date: Type.String() });
const ApplicationDataResponse = Type.Object({ applicationData: Nullable(Type.String()) });

/** A date query parameter as the official server binds a DateTime: a day or a timestamp. */
function dateParam(name: string, value: string): Date {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) throw BadRequest.field(name, `${name} must be a date or an ISO 8601 timestamp.`);
  return date;
}

const ACCESS =
  "Access: owners, admins and custom members with accessReports (`orgPermission(accessReports)`) of an organization whose plan has reports (Enterprise; 400 otherwise); non-members get 404, other members 403.";
const ReportParams = Type.Object({ orgId: Guid, reportId: Guid });

/** Organization reports ({base_url}/reports/organizations/..., as the official OrganizationReportsController). */
export const reportRoutes: FastifyPluginAsyncTypebox<{ reports: Reports; orgAccess: OrgAccess }> = async (app, { reports, orgAccess }) => {
  const config = { access: orgAccess.right('accessReports') };
  const base = '/reports/organizations/:orgId';

  app.post(
    base,
    {
      config,
      schema: {
        tags,
        summary: 'Add an organization report',
        description: `Stores the report the client computed: its encrypted report, summary and application data (all required, 400 naming the missing one), the content encryption key they are under, and the twelve metrics in the clear. ${ACCESS}`,
        params: OrgParams,
        body: AddReportBody,
        response: { 200: ReportResponse },
      },
    },
    async (request) => reports.add(memberCaller(request), request.body),
  );

  app.get(
    `${base}/latest`,
    {
      config,
      schema: { tags, summary: "Get an organization's latest report", description: `The report revised last; 404 when there is none. ${ACCESS}`, params: OrgParams, response: { 200: ReportResponse } },
    },
    async (request) => reports.latest(memberCaller(request)),
  );

  app.get(
    `${base}/data/summary`,
    {
      config,
      schema: {
        tags,
        summary: "Get an organization's report summaries over a date range",
        description: `The summaries of the reports revised from \`startDate\` to \`endDate\` (whole UTC days at both ends), newest first. ${ACCESS}`,
        params: OrgParams,
        querystring: Type.Object({ startDate: Type.String({ minLength: 1 }), endDate: Type.String({ minLength: 1 }) }),
        response: { 200: Type.Array(SummaryResponse) },
      },
    },
    async (request) => reports.summariesBetween(memberCaller(request), dateParam('startDate', request.query.startDate), dateParam('endDate', request.query.endDate)),
  );

  app.get(
    `${base}/data/summary/:reportId`,
    {
      config,
      schema: { tags, summary: "Get a report's summary", description: `The report's encrypted summary, its key and revision date. ${ACCESS}`, params: ReportParams, response: { 200: SummaryResponse } },
    },
    async (request) => reports.summary(memberCaller(request), request.params.reportId.toLowerCase()),
  );

  app.patch(
    `${base}/data/summary/:reportId`,
    {
      config,
      schema: {
        tags,
        summary: "Update a report's summary and metrics",
        description: `Replaces the report's encrypted summary (required) and its twelve metrics (one left out becomes null, as on the official server). ${ACCESS}`,
        params: ReportParams,
        body: SummaryBody,
        response: { 200: ReportResponse },
      },
    },
    async (request) => reports.updateSummary(memberCaller(request), request.params.reportId.toLowerCase(), request.body.summaryData, request.body.metrics),
  );

  app.get(
    `${base}/data/application/:reportId`,
    {
      config,
      schema: { tags, summary: "Get a report's application data", description: `The report's encrypted application data. ${ACCESS}`, params: ReportParams, response: { 200: ApplicationDataResponse } },
    },
    async (request) => reports.applicationData(memberCaller(request), request.params.reportId.toLowerCase()),
  );

  app.patch(
    `${base}/data/application/:reportId`,
    {
      config,
      schema: {
        tags,
        summary: "Update a report's application data",
        description: `Replaces the report's encrypted application data (required). ${ACCESS}`,
        params: ReportParams,
        body: ApplicationDataBody,
        response: { 200: ReportResponse },
      },
    },
    async (request) => reports.updateApplicationData(memberCaller(request), request.params.reportId.toLowerCase(), request.body.applicationData),
  );

  app.get(
    `${base}/:reportId`,
    {
      config,
      schema: { tags, summary: 'Get an organization report', description: `One report; 404 when there is none, 400 when it is another organization's. ${ACCESS}`, params: ReportParams, response: { 200: ReportResponse } },
    },
    async (request) => reports.get(memberCaller(request), request.params.reportId.toLowerCase()),
  );

  app.delete(
    `${base}/:reportId`,
    {
      config,
      schema: { tags, summary: 'Delete an organization report', description: `Deletes the report; answers an empty 200. ${ACCESS}`, params: ReportParams, response: { 200: EmptyResponse } },
    },
    async (request, reply) => {
      await reports.remove(memberCaller(request), request.params.reportId.toLowerCase());
      return emptyOk(reply);
    },
  );
};
