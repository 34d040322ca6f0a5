import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { RouteDoc } from '../../http/route-docs.js';
import { adminAccess } from './admin-access.js';
import { frameOf, Html, IdParam, sendPage } from './admin.pages.js';
import type { AdminService } from './admin.service.js';
import { definePage } from './admin.views.js';

/** A list cut at the console's bound says so, with the full count. */
const MORE = (list: string) => `<% if (it.${list}.total > it.${list}.rows.length) { %><p class="muted">The first <%= it.${list}.rows.length %> of <%= it.${list}.total %>.</p><% } %>`;

const GRANTS = (list: string, label: string, who: string, none: string) => `<div class="table-wrap" role="region" aria-label="${label}" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">${who}</th><th scope="col">Name</th><th scope="col">Type</th><th scope="col">Status</th><th scope="col">Wait (days)</th><th scope="col">Recovery</th><th scope="col">Since</th></tr></thead>
<tbody>
<% for (const g of it.${list}.rows) { %>
<tr><td data-label="${who}"><%= g.email %></td><td data-label="Name"><%= g.name ?? '' %></td><td data-label="Type"><%= g.type %></td><td data-label="Status"><%= g.status %></td><td data-label="Wait (days)"><%= g.waitDays %></td><td data-label="Recovery"><%= g.recovery ?? 'none' %></td><td data-label="Since"><%= g.created %></td></tr>
<% } %>
<% if (it.${list}.rows.length === 0) { %><tr><td colspan="7">${none}</td></tr><% } %>
</tbody>
</table>
</div>
${MORE(list)}`;

definePage(
  'user',
  `<h1><%= it.user.email %></h1>
<dl class="facts">
<dt>Id</dt><dd><%= it.user.id %></dd>
<dt>Name</dt><dd><%= it.user.name ?? '' %></dd>
<dt>Created</dt><dd><%= it.user.created %></dd>
<dt>Status</dt><dd><%= it.user.disabled ? 'disabled' : 'enabled' %></dd>
<dt>Must set a new password at next login</dt><dd><%= it.forcePasswordReset ? 'yes' : 'no' %></dd>
</dl>
<h2>Emergency access</h2>
<h3>Trusted emergency contacts</h3>
<p class="muted">People this user named, who may ask to view or take over this user's vault after the wait.</p>
${GRANTS('trustedContacts', 'Trusted emergency contacts', 'Contact', 'No trusted emergency contacts.')}
<h3>Emergency access granted to this user</h3>
<p class="muted">Accounts that named this user as their trusted emergency contact.</p>
${GRANTS('grantors', 'Emergency access granted to this user', 'Grantor', 'No one named this user.')}
<h2>Account recovery</h2>
<p class="muted">Per organization: whether the user is enrolled (an administrator of the organization can then set a new master password for them) and whether the organization's Account recovery policy is on.</p>
<div class="table-wrap" role="region" aria-label="Account recovery" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">Organization</th><th scope="col">Role</th><th scope="col">Membership</th><th scope="col">Enrolled</th><th scope="col">Account recovery policy</th></tr></thead>
<tbody>
<% for (const m of it.memberships.rows) { %>
<tr><td data-label="Organization"><a href="/admin/organizations/<%= m.organizationId %>"><%= m.name %></a></td><td data-label="Role"><%= m.role %></td><td data-label="Membership"><%= m.status %></td><td data-label="Enrolled"><%= m.enrolled ? 'yes' : 'no' %></td><td data-label="Account recovery policy"><%= m.policy %></td></tr>
<% } %>
<% if (it.memberships.rows.length === 0) { %><tr><td colspan="5">No memberships.</td></tr><% } %>
</tbody>
</table>
</div>
${MORE('memberships')}
<p><a href="/admin/users">Back to users</a></p>`,
);

const docs = {
  details: {
    summary: 'User details',
    description:
      "One account: its facts, whether it must set a new password at next login, its emergency access as grantor and as grantee (type, status, wait, where a recovery stands) and, per membership, its account recovery enrollment and the organization's Account recovery policy. At most 100 rows a list, with the full count. Access: an admin session.",
  },
} satisfies Record<string, RouteDoc>;

export const userDetailsPages: FastifyPluginAsyncTypebox<{ service: AdminService; tags: string[] }> = async (app, { service, tags }) => {
  app.get('/users/:id', { config: { access: adminAccess.session }, schema: { tags, ...docs.details, params: IdParam, response: { 200: Html } } }, async (request, reply) => {
    const details = await service.userDetails(request.params.id);
    return sendPage(reply, 'user', frameOf(request, details.user.email, '/admin/users'), details);
  });
};
