import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { BadRequest } from '../../http/errors.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { Guid } from '../../http/schemas.js';
import { EventType } from '../../platform/audit/event-type.js';
import type { InstanceEventScope } from '../events/events.service.js';
import { eventsCsv } from '../events/export.js';
import { adminAccess } from './admin-access.js';
import { frameOf, Html, sendPage } from './admin.pages.js';
import type { AdminService } from './admin.service.js';
import { definePage } from './admin.views.js';

/** Event categories by the hundreds of their type, as Bitwarden numbers them. */
export const CATEGORIES: Record<number, string> = {
  10: 'Users',
  11: 'Items',
  13: 'Collections',
  14: 'Groups',
  15: 'Members',
  16: 'Organizations',
  17: 'Policies',
  21: 'Secrets',
  22: 'Projects',
  23: 'Machine accounts',
  24: 'Phishing blocker',
  // Strongroom's own ranges (event-type.ts): account changes the official enum has no type for.
  90: 'Account changes',
  91: 'Emergency access',
};

const TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(EventType)
    .filter(([, value]) => typeof value === 'number')
    .map(([name, value]) => [value as number, name]),
);

definePage(
  'events',
  `<h1>Events</h1>
<p class="muted">The audit events of every organization and account on this server, newest first. Without dates, the last 30 days.</p>
<form class="row" method="get" action="/admin/events" role="search">
<div><label for="f-org">Organization</label><select id="f-org" name="organizationId"><option value="">All</option><% for (const o of it.organizations) { %><option value="<%= o.id %>"<% if (o.id === it.filter.organizationId) { %> selected<% } %>><%= o.name %></option><% } %></select></div>
<div><label for="f-user">Acting user (email)</label><input id="f-user" name="user" type="email" value="<%= it.filter.user %>"></div>
<div><label for="f-cat">Type</label><select id="f-cat" name="category"><option value="">All</option><% for (const [value, name] of it.categories) { %><option value="<%= value %>"<% if (String(value) === it.filter.category) { %> selected<% } %>><%= name %></option><% } %></select></div>
<div><label for="f-start">From (UTC)</label><input id="f-start" name="start" type="date" value="<%= it.filter.start %>"></div>
<div><label for="f-end">To (UTC)</label><input id="f-end" name="end" type="date" value="<%= it.filter.end %>"></div>
<button type="submit" class="secondary">Filter</button>
<a class="button" href="/admin/events.csv?<%= it.query %>" download>Export CSV</a>
</form>
<h2 id="chart-heading">Events per day by category</h2>
<div id="events-chart" class="chart" role="img" aria-labelledby="chart-heading" aria-describedby="chart-table-note"></div>
<script type="application/json" id="events-chart-data"><%~ it.chartJson %></script>
<details>
<summary id="chart-table-note">The chart's numbers as a table</summary>
<div class="table-wrap" role="region" aria-label="Events per day" tabindex="0">
<table>
<thead><tr><th scope="col">Day</th><% for (const s of it.chart.series) { %><th scope="col"><%= s.label %></th><% } %></tr></thead>
<tbody><% it.chart.days.forEach((day, i) => { %><tr><th scope="row"><%= day %></th><% for (const s of it.chart.series) { %><td><%= s.counts[i] %></td><% } %></tr><% }) %></tbody>
</table>
</div>
</details>
<h2>Events</h2>
<div class="table-wrap" role="region" aria-label="Events" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">Date (UTC)</th><th scope="col">Type</th><th scope="col">Organization</th><th scope="col">Acting user</th><th scope="col">Address</th></tr></thead>
<tbody>
<% for (const e of it.events) { %>
<tr><td data-label="Date"><%= e.date %></td><td data-label="Type"><%= e.type %></td><td data-label="Organization"><%= e.organization %></td><td data-label="Acting user"><%= e.actingUser %></td><td data-label="Address"><%= e.ip %></td></tr>
<% } %>
<% if (it.events.length === 0) { %><tr><td colspan="5">No events in this window.</td></tr><% } %>
</tbody>
</table>
</div>
<nav class="pager" aria-label="Pages">
<% if (it.first) { %><a href="<%= it.first %>">Newest events</a><% } %>
<% if (it.next) { %><a href="<%= it.next %>" rel="next">Older events</a><% } %>
</nav>`,
);

const docs = {
  page: {
    summary: 'Events page',
    description:
      'The audit events of every organization, newest first, 50 a page (continuation token), filtered by organization, acting user (email), category and date range (UTC days; the last 30 days without), with a chart of events per day by category. Access: an admin session.',
  },
  csv: { summary: 'Export events as CSV', description: "The same filter's events as CSV (the organization export's columns), streamed. Access: an admin session." },
} satisfies Record<string, RouteDoc>;

const DAY = /^\d{4}-\d{2}-\d{2}$/;

const Filter = Type.Object({
  organizationId: Type.Optional(Type.Union([Type.Literal(''), Guid])),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  category: Type.Optional(Type.Union([Type.Literal(''), Type.Enum(Object.keys(CATEGORIES))])),
  start: Type.Optional(Type.String({ maxLength: 10, pattern: '^(\\d{4}-\\d{2}-\\d{2})?$' })),
  end: Type.Optional(Type.String({ maxLength: 10, pattern: '^(\\d{4}-\\d{2}-\\d{2})?$' })),
  continuationToken: Type.Optional(Type.String({ maxLength: 200 })),
});
type FilterQuery = Static<typeof Filter>;

export const eventPages: FastifyPluginAsyncTypebox<{ service: AdminService; tags: string[] }> = async (app, { service, tags }) => {
  const session = { access: adminAccess.session };
  const events = service.deps.features.events;

  /** The service's scope and window of a filter; an email that names no account is a 400 naming the field. */
  async function scopeOf(query: FilterQuery): Promise<{ scope: InstanceEventScope; window: { start?: string; end?: string } }> {
    const scope: InstanceEventScope = {};
    if (query.organizationId) scope.organizationId = query.organizationId.toLowerCase();
    const email = query.user?.trim();
    if (email) {
      const user = await service.deps.features.accounts.findUser({ email });
      if (!user) throw BadRequest.field('user', `There is no account with the email ${email}.`);
      scope.actingUserId = user.id;
    }
    if (query.category) {
      const from = Number(query.category) * 100;
      scope.types = { from, to: from + 100 };
    }
    const start = query.start || undefined;
    const end = query.end || undefined;
    if ((start === undefined) !== (end === undefined)) throw BadRequest.field(start ? 'end' : 'start', 'Give both dates, or neither for the last 30 days.');
    const window = start && end && DAY.test(start) && DAY.test(end) ? { start: `${start}T00:00:00.000Z`, end: `${end}T23:59:59.999Z` } : {};
    return { scope, window };
  }

  app.get('/events', { config: session, schema: { tags, ...docs.page, querystring: Filter, response: { 200: Html } } }, async (request, reply) => {
    const query = request.query;
    const { scope, window } = await scopeOf(query);
    const page = await events.instanceEvents(scope, { ...window, ...(query.continuationToken ? { continuationToken: query.continuationToken } : {}) });
    const perDay = await events.instanceEventsPerDay(scope, window);
    const names = await service.namesOf(page.data);

    const days = [...new Set(perDay.map((row) => row.day))].sort();
    const categories = [...new Set(perDay.map((row) => row.category))].sort((a, b) => a - b);
    const chart = {
      days,
      series: categories.map((category) => ({
        label: CATEGORIES[category] ?? `Types ${category * 100}–${category * 100 + 99}`,
        counts: days.map((day) => perDay.find((row) => row.day === day && row.category === category)?.count ?? 0),
      })),
    };
    const params = new URLSearchParams();
    for (const key of ['organizationId', 'user', 'category', 'start', 'end'] as const) if (query[key]) params.set(key, String(query[key]));
    const base = params.toString();
    const withToken = (token: string) => `/admin/events?${base ? `${base}&` : ''}continuationToken=${encodeURIComponent(token)}`;

    return sendPage(reply, 'events', frameOf(request, 'Events', '/admin/events', true), {
      organizations: await service.organizationNames(),
      categories: Object.entries(CATEGORIES),
      filter: { organizationId: query.organizationId ?? '', user: query.user ?? '', category: query.category ?? '', start: query.start ?? '', end: query.end ?? '' },
      query: base,
      chart,
      // `<` cannot close the data block: JSON keeps it escaped.
      chartJson: JSON.stringify(chart).replaceAll('<', '\\u003c'),
      events: page.data.map((row) => ({
        date: row.date.slice(0, 19).replace('T', ' '),
        type: TYPE_NAMES[row.type] ?? String(row.type),
        organization: row.organization_id ? (names.organizations.get(row.organization_id) ?? row.organization_id) : '',
        actingUser: row.acting_user_id ? (names.users.get(row.acting_user_id) ?? row.acting_user_id) : '',
        ip: row.ip_address ?? '',
      })),
      first: query.continuationToken ? `/admin/events${base ? `?${base}` : ''}` : null,
      next: page.continuationToken ? withToken(page.continuationToken) : null,
    });
  });

  app.get(
    '/events.csv',
    { config: session, schema: { tags, ...docs.csv, querystring: Filter, response: { 200: Type.String({ description: 'CSV, one header row then one event a line' }) } } },
    async (request, reply) => {
      const { scope, window } = await scopeOf(request.query);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="strongroom-events.csv"')
        // A stream, as the organization export sends it; the schema documents the text it carries.
        .send(Readable.from(eventsCsv(events.exportInstanceEvents(scope, window))) as unknown as string);
    },
  );
};
