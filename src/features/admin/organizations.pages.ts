import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { Email } from '../../http/schemas.js';
import { PlanType } from '../organizations/plans.js';
import { adminAccess } from './admin-access.js';
import { Csrf, frameOf, Html, IdParam, PAGE_SIZE, PageQuery, pager, sendPage } from './admin.pages.js';
import { operatorOf, PLAN_NAMES, type AdminService } from './admin.service.js';
import { definePage, PARTS } from './admin.views.js';

const { CSRF, NOTICE, PAGER } = PARTS;

definePage(
  'organizations',
  `<h1>Organizations</h1>
${NOTICE}
<form class="row" method="get" action="/admin/organizations" role="search">
<div><label for="q">Search name or billing email</label><input id="q" name="q" type="search" value="<%= it.q %>"></div>
<button type="submit" class="secondary">Search</button>
</form>
<div class="table-wrap" role="region" aria-label="Organizations" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">Name</th><th scope="col">Plan</th><th scope="col">Members</th><th scope="col">Collections</th><th scope="col">Items</th><th scope="col">Secrets Manager</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>
<% for (const o of it.organizations) { %>
<tr>
<td data-label="Name"><a href="/admin/organizations/<%= o.id %>"><%= o.name %></a></td>
<td data-label="Plan"><%= o.plan %></td>
<td data-label="Members"><%= o.members %></td>
<td data-label="Collections"><%= o.collections %></td>
<td data-label="Items"><%= o.items %></td>
<td data-label="Secrets Manager"><%= o.secretsManager %></td>
<td data-label="Status"><%= o.enabled ? 'enabled' : 'disabled' %></td>
<td data-label="Created"><%= o.created %></td>
</tr>
<% } %>
<% if (it.organizations.length === 0) { %><tr><td colspan="8">No organizations<%= it.q ? ' match this search' : '' %>.</td></tr><% } %>
</tbody>
</table>
</div>
${PAGER}
<% if (it.licenses) { %>
<h2>License for a new organization</h2>
<p class="muted">On a self-hosted server the web vault creates an organization from a license file (its "New organization" page asks for one). This signs one with this server's issuer key.</p>
<form method="post" action="/admin/organizations/license">
${CSRF}
<div class="row">
<div><label for="lic-name">Organization name</label><input id="lic-name" name="name" required maxlength="50"></div>
<div><label for="lic-plan">Plan</label><select id="lic-plan" name="planType"><% for (const p of it.plans) { %><option value="<%= p.value %>"<% if (p.value === it.defaultPlan) { %> selected<% } %>><%= p.name %></option><% } %></select></div>
<div><label for="lic-email">Billing email</label><input id="lic-email" name="billingEmail" type="email" required></div>
<div><label for="lic-days">Valid for (days)</label><input id="lic-days" name="days" type="number" min="1" max="36500" value="365" required></div>
<div><label for="lic-seats">Seats (empty: the plan's)</label><input id="lic-seats" name="seats" type="number" min="1" max="1000000"></div>
</div>
<button type="submit">Download license file</button>
</form>
<% } %>`,
);

definePage(
  'organization',
  `<h1><%= it.org.name %></h1>
${NOTICE}
<dl class="facts">
<dt>Id</dt><dd><%= it.org.id %></dd>
<dt>Plan</dt><dd><%= it.plan %></dd>
<dt>Billing email</dt><dd><%= it.org.billing_email %></dd>
<dt>Status</dt><dd><%= it.enabled ? 'enabled' : 'disabled' %></dd>
<dt>Collections</dt><dd><%= it.counts.collections %></dd>
<dt>Items</dt><dd><%= it.counts.items %></dd>
<dt>Secrets Manager</dt><dd><%= it.counts.secretsManager %></dd>
</dl>
<p>
<form class="inline" method="post" action="/admin/organizations/<%= it.org.id %>/<%= it.enabled ? 'disable' : 'enable' %>">${CSRF}<button type="submit" class="secondary"><%= it.enabled ? 'Disable the organization' : 'Enable the organization' %></button></form>
<a class="button danger" href="/admin/organizations/<%= it.org.id %>/delete">Delete…</a>
</p>
<h2>Members</h2>
<div class="table-wrap" role="region" aria-label="Members" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Role</th><th scope="col">Status</th></tr></thead>
<tbody>
<% for (const m of it.members) { %>
<tr><td data-label="Email"><%= m.email %></td><td data-label="Name"><%= m.name ?? '' %></td><td data-label="Role"><%= m.role %></td><td data-label="Status"><%= m.status %></td></tr>
<% } %>
<% if (it.members.length === 0) { %><tr><td colspan="4">No members.</td></tr><% } %>
</tbody>
</table>
</div>
<p><a href="/admin/organizations">Back to organizations</a></p>`,
);

const NOTICES = {
  disabled: 'The organization is disabled: its members reach nothing in it and its API key stops.',
  enabled: 'The organization is enabled again.',
  unchanged: 'Nothing to change: the organization already was in that state.',
  deleted: 'The organization and everything in it are deleted.',
} as const;

const docs = {
  list: {
    summary: 'Organizations page',
    description: 'Every organization, searchable, 50 a page: plan, members, collections, items, Secrets Manager use, status; on self-hosted, the license form. Access: an admin session.',
  },
  details: { summary: 'Organization details', description: 'One organization with its members, their roles and statuses. Access: an admin session.' },
  disable: { summary: 'Disable an organization', description: 'Its members reach nothing in it and its API key logs in no more, until enabled. Access: an admin session and its CSRF token.' },
  enable: { summary: 'Enable an organization', description: 'A disabled organization works again. Access: an admin session and its CSRF token.' },
  deletePage: { summary: 'Confirm deleting an organization', description: 'Asks the operator to type the name of the organization to delete. Access: an admin session.' },
  delete: { summary: 'Delete an organization', description: 'Deletes the organization with its collections, items and memberships once `confirm` is its name. Access: an admin session and its CSRF token.' },
  license: {
    summary: 'Issue a license file',
    description:
      "Self-hosted: signs a license for a new organization with this instance's issuer key (as `strongroom license issue`) and answers it as a JSON download, for the web vault's new-organization upload. Access: an admin session and its CSRF token.",
  },
} satisfies Record<string, RouteDoc>;

export const organizationPages: FastifyPluginAsyncTypebox<{ service: AdminService; tags: string[]; selfHosted: boolean }> = async (app, { service, tags, selfHosted }) => {
  const session = { access: adminAccess.session };
  const plans = Object.entries(PLAN_NAMES).map(([value, name]) => ({ value: Number(value), name }));

  app.get(
    '/organizations',
    {
      config: session,
      schema: { tags, ...docs.list, querystring: Type.Object({ ...PageQuery, notice: Type.Optional(Type.Enum(Object.keys(NOTICES) as (keyof typeof NOTICES)[])) }), response: { 200: Html } },
    },
    async (request, reply) => {
      const q = (request.query.q ?? '').trim();
      const number = request.query.page ?? 1;
      const { organizations, total } = await service.organizations(q, { offset: (number - 1) * PAGE_SIZE, limit: PAGE_SIZE });
      return sendPage(reply, 'organizations', frameOf(request, 'Organizations', '/admin/organizations'), {
        organizations,
        q,
        notice: request.query.notice ? NOTICES[request.query.notice] : null,
        page: pager('/admin/organizations', { q }, number, total),
        licenses: selfHosted,
        plans,
        defaultPlan: PlanType.FamiliesAnnually,
      });
    },
  );

  app.post(
    '/organizations/license',
    {
      config: session,
      schema: {
        tags,
        ...docs.license,
        body: Type.Object({
          _csrf: Csrf,
          name: Type.String({ minLength: 1, maxLength: 50 }),
          // Form fields are text (bodies are not coerced): whole numbers, checked for range below.
          planType: Type.String({ pattern: '^\\d{1,4}$' }),
          billingEmail: Email,
          days: Type.String({ pattern: '^\\d{1,5}$' }),
          // An empty field is the plan's own number of seats.
          seats: Type.Optional(Type.String({ pattern: '^(\\d{1,7})?$' })),
        }),
        response: { 200: Type.Object({}, { additionalProperties: true, description: 'The signed license file (JSON), as an attachment' }) },
      },
    },
    async (request, reply) => {
      if (!selfHosted) throw new NotFound('Licenses are issued on a self-hosted server only.');
      const { name, billingEmail } = request.body;
      const days = Number(request.body.days);
      const seats = request.body.seats ? Number(request.body.seats) : null;
      if (days < 1 || days > 36500) throw BadRequest.field('days', 'The days field must be between 1 and 36500.');
      if (seats !== null && seats < 1) throw BadRequest.field('seats', 'The seats field must be at least 1, or empty for the plan\'s own.');
      const license = await service.issueLicense(operatorOf(request), { name, planType: Number(request.body.planType), billingEmail, days, seats });
      return reply
        .header('content-disposition', `attachment; filename="bitwarden_organization_license_${license.id}.json"`)
        .type('application/json; charset=utf-8')
        .send(license);
    },
  );

  app.get('/organizations/:id', { config: session, schema: { tags, ...docs.details, params: IdParam, querystring: Type.Object({ notice: Type.Optional(Type.Enum(Object.keys(NOTICES) as (keyof typeof NOTICES)[])) }), response: { 200: Html } } }, async (request, reply) => {
    const { org, view, members } = await service.organization(request.params.id);
    return sendPage(reply, 'organization', frameOf(request, org.name, '/admin/organizations'), {
      org,
      members,
      plan: view.plan,
      enabled: view.enabled,
      counts: view,
      notice: request.query.notice ? NOTICES[request.query.notice] : null,
    });
  });

  for (const [action, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    app.post(
      `/organizations/:id/${action}`,
      { config: session, schema: { tags, ...docs[action], params: IdParam, body: Type.Object({ _csrf: Csrf }), response: { 200: Html } } },
      async (request, reply) => {
        const changed = await service.setOrganizationEnabled(operatorOf(request), request.params.id, enabled);
        return reply.redirect(`/admin/organizations/${request.params.id}?notice=${changed ? (enabled ? 'enabled' : 'disabled') : 'unchanged'}`, 303);
      },
    );
  }

  app.get('/organizations/:id/delete', { config: session, schema: { tags, ...docs.deletePage, params: IdParam, response: { 200: Html } } }, async (request, reply) => {
    const { org } = await service.organization(request.params.id);
    return sendPage(reply, 'confirm', frameOf(request, 'Delete an organization', '/admin/organizations'), {
      heading: `Delete ${org.name}`,
      explanation: 'The organization, its collections, items, groups, policies, secrets and memberships are deleted. This cannot be undone.',
      expected: org.name,
      action: `/admin/organizations/${org.id}/delete`,
      button: 'Delete the organization',
      back: `/admin/organizations/${org.id}`,
    });
  });

  app.post(
    '/organizations/:id/delete',
    { config: session, schema: { tags, ...docs.delete, params: IdParam, body: Type.Object({ _csrf: Csrf, confirm: Type.String({ minLength: 1, maxLength: 256 }) }), response: { 200: Html } } },
    async (request, reply) => {
      await service.deleteOrganization(operatorOf(request), request.params.id, request.body.confirm);
      return reply.redirect('/admin/organizations?notice=deleted', 303);
    },
  );
};
