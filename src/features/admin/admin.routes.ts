import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { Clock } from '../../shared/clock.js';
import type { Config } from '../../config/config.js';
import { parseIpList } from '../../config/rate-limit-settings.js';
import type { Database } from '../../db/database.js';
import { enforceAccessRules, type Authenticator } from '../../http/access.js';
import { normalizeError } from '../../http/error-handler.js';
import { NotFound, TooManyRequests } from '../../http/errors.js';
import type { RouteDoc } from '../../http/route-docs.js';
import type { AdminConsoleFeatures } from './admin-features.js';
import { COMMON_HEADERS } from '../web-vault/security-headers.js';
import { adminAccess, adminCookie, installAdminAccess, SESSION_COOKIE, SIGN_IN_CSRF_COOKIE } from './admin-access.js';
import { createAdminAudit } from './admin-audit.js';
import { ADMIN_CSS } from './admin.css.js';
import { ADMIN_JS } from './admin.script.js';
import { createAdminService } from './admin.service.js';
import { createAdminSessions } from './admin-sessions.js';
import { verifyAdminToken } from './admin-token.js';
import { Csrf, frameOf, Html, PAGE_SIZE, PageQuery, pager, sendPage } from './admin.pages.js';
import { organizationPages } from './organizations.pages.js';
import { userPages } from './users.pages.js';
import { userDetailsPages } from './user-details.pages.js';
import { eventPages } from './events.pages.js';
import { diagnosticsPages } from './diagnostics.pages.js';

export interface AdminConsoleOptions {
  config: Config;
  database: Database;
  features: AdminConsoleFeatures;
  clock: Clock;
  authenticate: Authenticator;
}

const tags = ['Admin console'];
const Text = Type.String({ description: 'A static file of the console' });

/**
 * Content security policy of every console page: only Strongroom's own scripts, styles and
 * images; no frames, no other origin, forms only to the console itself.
 */
export const ADMIN_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

const require = createRequire(import.meta.url);
/** uPlot (the events chart), bundled from npm and served by Strongroom: no CDN. */
const UPLOT_JS = readFileSync(require.resolve('uplot/dist/uPlot.iife.min.js'), 'utf8');
const UPLOT_CSS = readFileSync(require.resolve('uplot/dist/uPlot.min.css'), 'utf8');

/** Five sign-in attempts an address at once, then one a minute; a right token gives its attempt back. */
const SIGN_IN_BUCKET = { intervalMs: 60_000, burst: 5 };

const docs = {
  asset: { summary: 'Admin console file', description: 'A style sheet or script of the admin console (uPlot is bundled from npm). Access: the address allow-list only.' },
  signInPage: { summary: 'Admin sign-in page', description: 'The form that takes the admin token. Access: the address allow-list (ADMIN_ALLOWED_IPS); the console exists only while ADMIN_TOKEN is set.' },
  signIn: {
    summary: 'Sign in to the admin console',
    description:
      "Checks the admin token against ADMIN_TOKEN's Argon2id hash and starts a session (cookie `strongroom_admin`: HttpOnly, SameSite=Strict, Secure over HTTPS, ADMIN_SESSION_MINUTES). Five attempts an address, then one a minute (429). The form's CSRF token must match its cookie.",
  },
  signOut: { summary: 'Sign out of the admin console', description: 'Ends the session. Access: an admin session and its CSRF token.' },
  home: { summary: 'Admin console home', description: 'Redirects to the users page. Access: an admin session.' },
  log: { summary: 'Admin log', description: 'The instance audit log of the console: sign-ins, refused sign-ins and every action, with the address. Access: an admin session.' },
} satisfies Record<string, RouteDoc>;

/**
 * The operator's console at /admin (docs/admin-console.md): server-rendered pages over the
 * same services the API routes call. Registered only while ADMIN_TOKEN is set and
 * ADMIN_ENABLED is on; otherwise /admin is an ordinary 404.
 */
export const adminConsoleRoutes: FastifyPluginAsyncTypebox<AdminConsoleOptions> = async (app, { config, database, features, clock, authenticate }) => {
  const tokenHash = config.adminToken;
  if (!tokenHash) throw new Error('adminConsoleRoutes needs ADMIN_TOKEN');
  const db = database.db;
  const sessions = createAdminSessions({ db, clock, minutes: config.adminSessionMinutes });
  const audit = createAdminAudit({ db, clock });
  const service = createAdminService({ db, clock, config, features, audit, database });

  enforceAccessRules(app, authenticate);
  installAdminAccess(app, { sessions, allowedIps: parseIpList(config.adminAllowedIps ?? '').entries });
  app.addHook('onSend', async (_request, reply) => {
    for (const [name, value] of Object.entries(COMMON_HEADERS)) void reply.header(name, value);
    void reply.header('content-security-policy', ADMIN_CSP).header('x-frame-options', 'DENY').header('cache-control', 'no-store');
  });
  // Errors are pages too, naming what is wrong; 500s say nothing more (normalizeError logs them).
  app.setErrorHandler(async (error, request, reply) => {
    const normalized = normalizeError(error, request);
    const details = Object.values(normalized.validationErrors ?? {}).flat();
    if (normalized.retryAfterSeconds) void reply.header('retry-after', String(normalized.retryAfterSeconds));
    return sendPage(
      reply,
      'error',
      frameOf(request, 'Problem'),
      { heading: normalized.statusCode >= 500 ? 'Something went wrong' : 'This cannot be done', message: details.length > 0 ? details.join(' ') : normalized.message, back: request.adminSession ? '/admin/users' : '/admin/login' },
      normalized.statusCode,
    );
  });
  app.setNotFoundHandler(() => {
    throw new NotFound('There is no such page in the admin console.');
  });

  const assets: Record<string, { type: string; body: string }> = {
    'admin.css': { type: 'text/css; charset=utf-8', body: ADMIN_CSS },
    'admin.js': { type: 'text/javascript; charset=utf-8', body: ADMIN_JS },
    'uplot.js': { type: 'text/javascript; charset=utf-8', body: UPLOT_JS },
    'uplot.css': { type: 'text/css; charset=utf-8', body: UPLOT_CSS },
  };
  app.get(
    '/assets/:name',
    {
      config: { access: adminAccess.signIn },
      schema: { tags, ...docs.asset, params: Type.Object({ name: Type.String({ maxLength: 40 }) }), response: { 200: Text } },
    },
    async (request, reply) => {
      const asset = assets[request.params.name];
      if (!asset) throw new NotFound('There is no such file in the admin console.');
      return reply.type(asset.type).send(asset.body);
    },
  );

  app.get('/login', { config: { access: adminAccess.signIn }, schema: { tags, ...docs.signInPage, response: { 200: Html } } }, async (request, reply) => {
    const csrf = randomBytes(32).toString('base64url');
    void reply.header('set-cookie', adminCookie(request, SIGN_IN_CSRF_COOKIE, csrf, 3600));
    return sendPage(reply, 'login', { title: 'Sign in' }, { csrf });
  });

  app.post(
    '/login',
    {
      config: { access: adminAccess.signIn },
      schema: { tags, ...docs.signIn, body: Type.Object({ _csrf: Csrf, token: Type.String({ minLength: 1, maxLength: 500 }) }), response: { 200: Html } },
    },
    async (request, reply) => {
      const ip = request.ip ?? null;
      const bucket = { key: `admin-signin:${ip ?? 'unknown'}`, ...SIGN_IN_BUCKET };
      const decision = await features.rateLimits.store.consume([bucket], clock.now().getTime());
      if (!decision.allowed) {
        throw new TooManyRequests('Too many sign-in attempts from your address. Wait a minute and try again.', Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
      }
      if (!(await verifyAdminToken(request.body.token, tokenHash))) {
        await audit.record({ action: 'sign-in-refused', ipAddress: ip });
        return sendPage(reply, 'login', { title: 'Sign in' }, { csrf: request.body._csrf, problem: 'That is not the admin token.' }, 401);
      }
      await features.rateLimits.store.refund([bucket], clock.now().getTime());
      const { cookie } = await sessions.create(ip);
      await audit.record({ action: 'signed-in', ipAddress: ip });
      void reply.header('set-cookie', [adminCookie(request, SESSION_COOKIE, cookie, sessions.lifetimeSeconds), adminCookie(request, SIGN_IN_CSRF_COOKIE, '', 0)]);
      return reply.redirect('/admin/users', 303);
    },
  );

  app.post(
    '/logout',
    { config: { access: adminAccess.session }, schema: { tags, ...docs.signOut, body: Type.Object({ _csrf: Csrf }), response: { 200: Html } } },
    async (request, reply) => {
      if (request.adminSession) await sessions.end(request.adminSession.id);
      await audit.record({ action: 'signed-out', ipAddress: request.ip ?? null });
      void reply.header('set-cookie', adminCookie(request, SESSION_COOKIE, '', 0));
      return reply.redirect('/admin/login', 303);
    },
  );

  app.get('/', { config: { access: adminAccess.session }, schema: { tags, ...docs.home, response: { 200: Html } } }, async (_request, reply) => reply.redirect('/admin/users', 303));

  app.get(
    '/log',
    { config: { access: adminAccess.session }, schema: { tags, ...docs.log, querystring: Type.Object({ page: PageQuery.page }), response: { 200: Html } } },
    async (request, reply) => {
      const number = request.query.page ?? 1;
      const { rows, total } = await audit.list({ offset: (number - 1) * PAGE_SIZE, limit: PAGE_SIZE });
      const events = rows.map((row) => ({
        date: row.date.slice(0, 19).replace('T', ' '),
        action: row.action,
        target: [row.target_type, row.detail ?? row.target_id].filter(Boolean).join(' '),
        ip: row.ip_address ?? '',
      }));
      return sendPage(reply, 'log', frameOf(request, 'Admin log', '/admin/log'), { events, page: pager('/admin/log', {}, number, total) });
    },
  );

  await app.register(userPages, { service, tags });
  await app.register(userDetailsPages, { service, tags });
  await app.register(organizationPages, { service, tags, selfHosted: config.selfHosted });
  await app.register(eventPages, { service, tags });
  await app.register(diagnosticsPages, { service, tags });
};
