import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { envName, isSecretSetting, type Config } from '../../config/config.js';
import { sqlitePathOf } from '../../db/database.js';
import { GatewayError } from '../../http/errors.js';
import type { RouteDoc } from '../../http/route-docs.js';
import { Email } from '../../http/schemas.js';
import { adminAccess } from './admin-access.js';
import { Csrf, frameOf, Html, sendPage } from './admin.pages.js';
import type { AdminService } from './admin.service.js';
import { definePage, PARTS } from './admin.views.js';
// Read at build time into the bundle (scripts/build-if-stale.mjs), so no path to it is needed at run time.
import packageJson from '../../../package.json' with { type: 'json' };
import { compareText } from '../../shared/compare-text.js';

const { CSRF, NOTICE } = PARTS;
const VERSION = packageJson.version;

definePage(
  'diagnostics',
  `<h1>Diagnostics</h1>
${NOTICE}
<h2>Server</h2>
<dl class="facts">
<% for (const [name, value] of it.server) { %><dt><%= name %></dt><dd><%= value %></dd><% } %>
</dl>
<h2>Services</h2>
<div class="table-wrap" role="region" aria-label="Services" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">Service</th><th scope="col">Status</th><th scope="col">Details</th></tr></thead>
<tbody>
<% for (const c of it.checks) { %><tr><td data-label="Service"><%= c.name %></td><td data-label="Status"><%= c.status %></td><td data-label="Details"><%= c.details %></td></tr><% } %>
</tbody>
</table>
</div>
<h2>Send a test mail</h2>
<form class="row" method="post" action="/admin/diagnostics/test-mail">
${CSRF}
<div><label for="mail-to">To</label><input id="mail-to" name="to" type="email" required></div>
<button type="submit" class="secondary">Send a test mail</button>
</form>
<h2>Migrations applied</h2>
<ol><% for (const m of it.migrations) { %><li><%= m %></li><% } %></ol>
<h2>Effective configuration</h2>
<p class="muted">Passwords, the admin token's hash and the passwords inside URLs are not shown.</p>
<div class="table-wrap" role="region" aria-label="Configuration" tabindex="0">
<table class="stack">
<thead><tr><th scope="col">Setting</th><th scope="col">Value</th></tr></thead>
<tbody>
<% for (const [name, value] of it.settings) { %><tr><td data-label="Setting"><code><%= name %></code></td><td data-label="Value"><%= value %></td></tr><% } %>
</tbody>
</table>
</div>`,
);

/** The configuration as the server runs it, secrets replaced and passwords cut out of URLs. */
export function redactedSettings(config: Config): [string, string][] {
  return Object.entries(config)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]): [string, string] => {
      if (isSecretSetting(key)) return [envName(key), '(hidden)'];
      const text = typeof value === 'string' ? value : JSON.stringify(value);
      return [envName(key), text.replace(/(\/\/[^/:@\s]*):[^@/\s]*@/g, '$1:(hidden)@')];
    })
    .sort(([a], [b]) => compareText(a, b));
}

const docs = {
  page: {
    summary: 'Diagnostics page',
    description:
      'Version, Node, database engine and size, migrations applied, the health of the database, Redis, RabbitMQ and SMTP, clock skew against the database, the effective configuration with secrets hidden, and whether a web vault folder was found. Access: an admin session.',
  },
  testMail: { summary: 'Send a test mail', description: 'Sends a short message through the configured SMTP server (502 naming the failure when it is refused). Access: an admin session and its CSRF token.' },
} satisfies Record<string, RouteDoc>;

const NOTICES = { 'mail-sent': 'The test mail was handed to the SMTP server.' } as const;

export const diagnosticsPages: FastifyPluginAsyncTypebox<{ service: AdminService; tags: string[] }> = async (app, { service, tags }) => {
  const session = { access: adminAccess.session };
  const { config, features, database } = service.deps;
  const db = database.db;

  async function databaseFacts(): Promise<{ size: string; skewMs: number; migrations: string[] }> {
    const before = Date.now();
    let dbNow: Date;
    let bytes: number | null = null;
    if (database.engine === 'postgres') {
      const row = (await sql<{ now: Date | string; size: string | number }>`select now() as now, pg_database_size(current_database()) as size`.execute(db)).rows[0];
      dbNow = new Date(row?.now ?? NaN);
      bytes = Number(row?.size ?? NaN);
    } else {
      const row = (await sql<{ now: string }>`select strftime('%Y-%m-%dT%H:%M:%fZ', 'now') as now`.execute(db)).rows[0];
      dbNow = new Date(row?.now ?? NaN);
      const path = sqlitePathOf(config.databaseUrl);
      if (path && path !== ':memory:') {
        try {
          bytes = statSync(path).size;
        } catch {
          bytes = null;
        }
      }
    }
    // The database's clock against the midpoint of the round trip.
    const skewMs = dbNow.getTime() - (before + Date.now()) / 2;
    const migrations = (await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db)).rows.map((r) => r.name);
    const size = bytes === null || Number.isNaN(bytes) ? 'unknown (in memory)' : `${(bytes / 1024 / 1024).toFixed(1)} MB`;
    return { size, skewMs, migrations };
  }

  async function smtpStatus(): Promise<{ name: string; status: string; details: string }> {
    if (!features.mailer.enabled) return { name: 'SMTP', status: 'not configured', details: 'SMTP_HOST is not set: mail is written to the log instead.' };
    try {
      await features.mailer.check();
      return { name: 'SMTP', status: 'Healthy', details: `${config.smtpHost ?? ''}:${config.smtpPort}` };
    } catch (error) {
      return { name: 'SMTP', status: 'Unhealthy', details: error instanceof Error ? error.message : String(error) };
    }
  }

  app.get(
    '/diagnostics',
    { config: session, schema: { tags, ...docs.page, querystring: Type.Object({ notice: Type.Optional(Type.Enum(Object.keys(NOTICES) as (keyof typeof NOTICES)[])) }), response: { 200: Html } } },
    async (request, reply) => {
      const [facts, health, smtp] = await Promise.all([databaseFacts(), features.health.report(), smtpStatus()]);
      const LABELS: Record<string, string> = { database: 'Database', redis: 'Redis', broker: 'RabbitMQ' };
      const checks = [
        ...Object.entries(health.results).map(([name, entry]) => ({
          name: LABELS[name] ?? name,
          status: entry.status,
          details: entry.description ?? Object.entries(entry.data).map(([k, v]) => `${k}: ${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', '),
        })),
        ...(config.redisUrl ? [] : [{ name: 'Redis', status: 'not configured', details: 'REDIS_URL is not set: limits and notifications stay in this process.' }]),
        ...(config.amqpUrl ? [] : [{ name: 'RabbitMQ', status: 'not configured', details: 'AMQP_URL is not set: events are forwarded in process.' }]),
        smtp,
      ];
      const server: [string, string][] = [
        ['Strongroom version', VERSION],
        ['Node', process.version],
        ['Database engine', database.engine === 'postgres' ? 'PostgreSQL' : 'SQLite'],
        ['Database size', facts.size],
        ['Clock skew against the database', `${Math.round(facts.skewMs)} ms${Math.abs(facts.skewMs) > 2000 ? ' (more than 2 s: check the clocks, tokens and events depend on them)' : ''}`],
        ['Web vault', config.webVaultDir ? `found in ${config.webVaultDir}` : `not found (WEB_VAULT_DIR, or ${resolve(config.dataDir, 'web-vault')})`],
        ['Deployment', config.deployment],
        ['Services', config.services.join(', ')],
      ];
      return sendPage(reply, 'diagnostics', frameOf(request, 'Diagnostics', '/admin/diagnostics'), {
        server,
        checks,
        migrations: facts.migrations,
        settings: redactedSettings(config),
        notice: request.query.notice ? NOTICES[request.query.notice] : null,
      });
    },
  );

  app.post(
    '/diagnostics/test-mail',
    { config: session, schema: { tags, ...docs.testMail, body: Type.Object({ _csrf: Csrf, to: Email }), response: { 200: Html } } },
    async (request, reply) => {
      if (!features.mailer.enabled) throw new GatewayError('SMTP is not configured (SMTP_HOST): there is no mail server to send through.');
      try {
        await features.mailer.send({ to: request.body.to, subject: 'Strongroom test mail', text: 'This test mail was sent from the Strongroom admin console. Mail from this server reaches you.' }, request.log);
      } catch (error) {
        throw new GatewayError(`The mail server did not take the test mail: ${error instanceof Error ? error.message : String(error)}`);
      }
      await service.audit.record({ action: 'test-mail-sent', detail: request.body.to, ipAddress: request.ip ?? null });
      return reply.redirect('/admin/diagnostics?notice=mail-sent', 303);
    },
  );
};
