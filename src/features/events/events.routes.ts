import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { access, type AccessRule } from '../../http/access.js';
import { Forbidden } from '../../http/errors.js';
import { userCaller } from '../../http/request-context.js';
import { IdParams, list, ListOf, OrgIdParams } from '../../http/schemas.js';
import { memberCaller, membershipOf, type OrgAccess } from '../../platform/access/org-access.js';
import { EventQuery, EventResponse, OrgParams } from './events.schemas.js';
import type { EventQueryService } from './events.service.js';
import { eventsCsv, eventsJson } from './export.js';

const tags = ['Events'];

const WINDOW =
  'Answers 50 events a page, newest first, with a continuation token; without both `start` and `end` the window is the last 30 days, reversed bounds are swapped and a window over 367 days is a 400.';
const PLAN = "The organization's plan must include event logs (`useEvents`), else 403.";
const NO_PLAN = "This organization's plan does not include event logs.";

const ExportQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('csv'), Type.Literal('json')], { description: 'csv (default) or json' })),
  start: EventQuery.properties.start,
  end: EventQuery.properties.end,
});

/**
 * Reading the audit log: the organization's ({base_url}/organizations/{orgId}/events), a
 * member's, the caller's own, an item's, and an export of the organization's.
 */
export const eventRoutes: FastifyPluginAsyncTypebox<{ events: EventQueryService; orgAccess: OrgAccess }> = async (app, { events, orgAccess }) => {
  /** accessEventLogs in the organization, and the plan's useEvents. */
  const eventLogs = (param = 'orgId'): AccessRule => {
    const rule = orgAccess.right('accessEventLogs', param);
    return {
      ...rule,
      async authorize(request, principal) {
        await rule.authorize?.(request, principal);
        if (!(await events.usesEvents(membershipOf(request).organizationId))) throw new Forbidden(NO_PLAN);
      },
    };
  };

  app.get(
    '/organizations/:orgId/events',
    {
      config: { access: eventLogs() },
      schema: {
        tags,
        summary: "Read an organization's audit log",
        description: `The organization's events, optionally filtered by \`actingUserId\` or \`itemId\` (any resource an event is about). ${WINDOW} Access: a confirmed member holding accessEventLogs (\`orgPermission(accessEventLogs)\`: owners, admins, custom members with it); non-members get 404, other members 403. ${PLAN}`,
        params: OrgParams,
        querystring: EventQuery,
        response: { 200: ListOf(EventResponse) },
      },
    },
    async (request) => {
      const page = await events.organizationLog(memberCaller(request), request.query);
      return list(page.data, page.continuationToken);
    },
  );

  app.get(
    '/organizations/:orgId/users/:id/events',
    {
      config: { access: eventLogs() },
      schema: {
        tags,
        summary: "Read what one member did in an organization",
        description: `The organization's events whose acting user is the member's user. ${WINDOW} A member not linked to a user yet (invited), or of another organization, is a 404. Access: a confirmed member holding accessEventLogs; non-members get 404, other members 403. ${PLAN}`,
        params: OrgIdParams,
        querystring: Type.Omit(EventQuery, ['actingUserId', 'itemId']),
        response: { 200: ListOf(EventResponse) },
      },
    },
    async (request) => {
      const page = await events.memberEvents(memberCaller(request), request.params.id, request.query);
      return list(page.data, page.continuationToken);
    },
  );

  app.get(
    '/events',
    {
      config: { access: access.application },
      schema: {
        tags,
        summary: 'Read your own events',
        description: `The caller's events outside any organization (logins, failed logins, password changes, personal-item events, exports), as the official GET /events. ${WINDOW} Access: a user token with scope \`api\` from a client login.`,
        querystring: Type.Omit(EventQuery, ['actingUserId', 'itemId']),
        response: { 200: ListOf(EventResponse) },
      },
    },
    async (request) => {
      const page = await events.userEvents(userCaller(request), request.query);
      return list(page.data, page.continuationToken);
    },
  );

  app.get(
    '/ciphers/:id/events',
    {
      config: { access: access.application },
      schema: {
        tags,
        summary: "Read an item's events",
        description: `The item's events. ${WINDOW} Access: for an organization item, a confirmed member of its organization holding accessEventLogs, on a plan with \`useEvents\`; for a personal item, its owner. Anyone else gets 404, as for an item that does not exist.`,
        params: IdParams,
        querystring: Type.Omit(EventQuery, ['actingUserId', 'itemId']),
        response: { 200: ListOf(EventResponse) },
      },
    },
    async (request) => {
      const page = await events.cipherEvents(userCaller(request), request.params.id, request.query);
      return list(page.data, page.continuationToken);
    },
  );

  app.get(
    '/organizations/:orgId/events/export',
    {
      config: { access: eventLogs(), callerLimit: 'export' },
      schema: {
        tags,
        summary: "Export an organization's audit log",
        description: `Every event of the window (not paged), newest first, as \`format=csv\` (the default; a header row, then one row per event with the fields of the event list) or \`format=json\` (a JSON array of event objects), sent as an attachment. A read of several secrets is one row per secret, as in the log. The window is the log's: without both \`start\` and \`end\` the last 30 days; over 367 days is a 400. Access: a confirmed member holding accessEventLogs; non-members get 404, other members 403. ${PLAN}`,
        params: OrgParams,
        querystring: ExportQuery,
        response: { 200: Type.String({ description: 'text/csv or application/json' }) },
      },
    },
    async (request, reply) => {
      const organizationId = membershipOf(request).organizationId;
      const format = request.query.format ?? 'csv';
      const window = { ...(request.query.start ? { start: request.query.start } : {}), ...(request.query.end ? { end: request.query.end } : {}) };
      const rows = events.exportOrganizationEvents(organizationId, window);
      // Bad bounds are a 400 before the first byte is sent.
      const first = await rows.next();
      const all = (async function* () {
        if (!first.done) yield first.value;
        yield* rows;
      })();
      const body = format === 'json' ? eventsJson(all) : eventsCsv(all);
      return reply
        .type(format === 'json' ? 'application/json; charset=utf-8' : 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="events-${organizationId}.${format}"`)
        .send(Readable.from(body) as unknown as string);
    },
  );
};
