import { Eta } from 'eta';

/**
 * The console's pages, rendered on the server with Eta (every `<%= %>` is escaped). Each page
 * is a template of its own laid inside the layout; forms carry the session's CSRF token.
 */
const LAYOUT = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<title><%= it.title %> · Strongroom admin</title>
<link rel="stylesheet" href="/admin/assets/admin.css">
<% if (it.chart) { %><link rel="stylesheet" href="/admin/assets/uplot.css">
<script src="/admin/assets/uplot.js" defer></script>
<script src="/admin/assets/admin.js" defer></script><% } %>
</head>
<body>
<a class="skip" href="#main">Skip to content</a>
<header>
<span class="brand">Strongroom admin</span>
<% if (it.csrf) { %>
<nav aria-label="Admin console">
<ul>
<% for (const [href, label] of [['/admin/users', 'Users'], ['/admin/organizations', 'Organizations'], ['/admin/events', 'Events'], ['/admin/diagnostics', 'Diagnostics'], ['/admin/log', 'Admin log']]) { %>
<li><a href="<%= href %>"<% if (it.active === href) { %> aria-current="page"<% } %>><%= label %></a></li>
<% } %>
</ul>
</nav>
<form class="inline" method="post" action="/admin/logout"><input type="hidden" name="_csrf" value="<%= it.csrf %>"><button type="submit">Sign out</button></form>
<% } %>
</header>
<main id="main" tabindex="-1">
<%~ it.body %>
</main>
</body>
</html>
`;

const CSRF = `<input type="hidden" name="_csrf" value="<%= it.csrf %>">`;

const LOGIN = `<div class="login">
<h1>Sign in</h1>
<% if (it.problem) { %><p class="problem" role="alert"><%= it.problem %></p><% } %>
<form method="post" action="/admin/login">
${CSRF}
<label for="token">Admin token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<p class="muted">The token <code>strongroom admin-token</code> printed; the server keeps only its hash (ADMIN_TOKEN).</p>
<button type="submit">Sign in</button>
</form>
</div>`;

const NOTICE = `<% if (it.notice) { %><p class="notice" role="status"><%= it.notice %></p><% } %><% if (it.problem) { %><p class="problem" role="alert"><%= it.problem %></p><% } %>`;

const PAGER = `<nav class="pager" aria-label="Pages">
<% if (it.page.previous) { %><a href="<%= it.page.previous %>" rel="prev">Previous page</a><% } %>
<span>Page <%= it.page.number %> of <%= it.page.count %> (<%= it.page.total %> in all)</span>
<% if (it.page.next) { %><a href="<%= it.page.next %>" rel="next">Next page</a><% } %>
</nav>`;

const USERS = `<h1>Users</h1>
${NOTICE}
<form class="row" method="get" action="/admin/users" role="search">
<div><label for="q">Search email or name</label><input id="q" name="q" type="search" value="<%= it.q %>"></div>
<button type="submit" class="secondary">Search</button>
</form>
<h2>Invite a user</h2>
<form class="row" method="post" action="/admin/users/invite">
${CSRF}
<div><label for="invite-email">Email</label><input id="invite-email" name="email" type="email" required autocomplete="off"></div>
<button type="submit">Send invitation</button>
</form>
<h2>Accounts</h2>
<div class="table-wrap" role="region" aria-label="Users" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Last activity</th><th scope="col">Email verified</th><th scope="col">Two-step login</th><th scope="col">Items</th><th scope="col">Organizations</th><th scope="col">Status</th><th scope="col">Actions</th></tr></thead>
<tbody>
<% for (const u of it.users) { %>
<tr>
<td data-label="Email"><a href="/admin/users/<%= u.id %>"><%= u.email %></a></td>
<td data-label="Name"><%= u.name ?? '' %></td>
<td data-label="Created"><%= u.created %></td>
<td data-label="Last activity"><%= u.lastActivity ?? 'never' %></td>
<td data-label="Email verified"><%= u.emailVerified ? 'yes' : 'no' %></td>
<td data-label="Two-step login"><%= u.twoStepLogin ? 'on' : 'off' %></td>
<td data-label="Items"><%= u.items %></td>
<td data-label="Organizations"><%= u.organizations.join(', ') || 'none' %></td>
<td data-label="Status"><%= u.disabled ? 'disabled' : 'enabled' %><% if (u.forcePasswordReset) { %>, must set a new password<% } %></td>
<td data-label="Actions" class="actions">
<form class="inline" method="post" action="/admin/users/<%= u.id %>/<%= u.disabled ? 'enable' : 'disable' %>">${CSRF}<button type="submit" class="secondary" aria-label="<%= u.disabled ? 'Enable' : 'Disable' %> <%= u.email %>"><%= u.disabled ? 'Enable' : 'Disable' %></button></form>
<% if (!u.emailVerified) { %><form class="inline" method="post" action="/admin/users/<%= u.id %>/resend-verification">${CSRF}<button type="submit" class="secondary" aria-label="Resend the verification mail to <%= u.email %>">Resend verification</button></form><% } %>
<form class="inline" method="post" action="/admin/users/<%= u.id %>/deauthorize">${CSRF}<button type="submit" class="secondary" aria-label="End every session of <%= u.email %>">End sessions</button></form>
<% if (u.twoStepLogin) { %><a class="button danger" href="/admin/users/<%= u.id %>/remove-two-step-login" aria-label="Remove two-step login of <%= u.email %>">Remove two-step login…</a><% } %>
<a class="button danger" href="/admin/users/<%= u.id %>/delete" aria-label="Delete <%= u.email %>">Delete…</a>
</td>
</tr>
<% } %>
<% if (it.users.length === 0) { %><tr><td colspan="10">No users<%= it.q ? ' match this search' : '' %>.</td></tr><% } %>
</tbody>
</table>
</div>
${PAGER}`;

const CONFIRM = `<h1><%= it.heading %></h1>
<p><%= it.explanation %></p>
<form method="post" action="<%= it.action %>">
${CSRF}
<label for="confirm">Type <strong><%= it.expected %></strong> to confirm</label>
<input id="confirm" name="confirm" required autocomplete="off">
<p><button type="submit" class="danger"><%= it.button %></button> <a href="<%= it.back %>">Cancel</a></p>
</form>`;

const INVITED = `<h1>Invitation</h1>
<% if (it.mailed) { %><p class="notice" role="status">Sent an invitation to <%= it.email %>. The link works for <%= it.days %> days.</p>
<% } else { %><p class="notice" role="status"><%= it.why %> Pass this link on to <%= it.email %>; it works for <%= it.days %> days:</p>
<pre><%= it.link %></pre><% } %>
<p><a href="/admin/users">Back to users</a></p>`;

const VERIFICATION = `<h1>Email verification</h1>
<% if (it.mailed) { %><p class="notice" role="status">Sent the verification link to <%= it.email %>. It works for 24 hours.</p>
<% } else { %><p class="notice" role="status">SMTP is not configured (SMTP_HOST), so no mail was sent. Pass this link on to <%= it.email %>; it works for 24 hours:</p>
<pre><%= it.link %></pre><% } %>
<p><a href="/admin/users">Back to users</a></p>`;

const ERROR = `<h1><%= it.heading %></h1>
<p class="problem" role="alert"><%= it.message %></p>
<p><a href="<%= it.back %>">Back</a></p>`;

const LOG = `<h1>Admin log</h1>
<p class="muted">What was done in this console, newest first, with the address it came from.</p>
<div class="table-wrap" role="region" aria-label="Admin log" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">Date (UTC)</th><th scope="col">Action</th><th scope="col">Target</th><th scope="col">Address</th></tr></thead>
<tbody>
<% for (const e of it.events) { %>
<tr><td data-label="Date"><%= e.date %></td><td data-label="Action"><%= e.action %></td><td data-label="Target"><%= e.target %></td><td data-label="Address"><%= e.ip %></td></tr>
<% } %>
</tbody>
</table>
</div>
${PAGER}`;

const eta = new Eta({ autoEscape: true, autoTrim: false });
const PAGES = { login: LOGIN, users: USERS, confirm: CONFIRM, invited: INVITED, verification: VERIFICATION, error: ERROR, log: LOG } as const;
eta.loadTemplate('@layout', LAYOUT);
for (const [name, template] of Object.entries(PAGES)) eta.loadTemplate(`@${name}`, template);

export type PageName = keyof typeof PAGES | (string & {});

export interface PageFrame {
  title: string;
  /** The session's CSRF token; absent on pages shown before sign-in (no navigation then). */
  csrf?: string;
  /** The navigation entry of this page. */
  active?: string;
  /** Loads uPlot and the console's script (the events chart). */
  chart?: boolean;
}

/** Adds a page's template (other page files call this once when loaded). */
export function definePage(name: string, template: string): void {
  eta.loadTemplate(`@${name}`, template);
}

export function renderPage(name: PageName, frame: PageFrame, data: Record<string, unknown>): string {
  const body = eta.render(`@${name}`, { ...data, csrf: frame.csrf ?? data.csrf });
  return eta.render('@layout', { ...frame, body });
}

export const PARTS = { CSRF, NOTICE, PAGER };
