import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccessRule } from '../../http/access.js';
import { Forbidden, Unauthorized } from '../../http/errors.js';
import { ipMatcher } from '../../config/rate-limit-settings.js';
import { safeEqual } from '../../shared/constant-time.js';
import type { AdminSession, AdminSessions } from './admin-sessions.js';

/**
 * The console's two access rules. Neither needs a bearer token (the API guard lets them
 * through); `installAdminAccess` enforces them for every route of the console:
 * - `adminSignIn`: the sign-in page and the style sheet; only the address allow-list applies.
 * - `adminSession`: everything else; a live session cookie, and on every form post the
 *   session's CSRF token.
 */
export const adminAccess = {
  signIn: { name: 'adminSignIn', principals: [] },
  session: { name: 'adminSession', principals: [] },
} as const satisfies Record<string, AccessRule>;

export const SESSION_COOKIE = 'strongroom_admin';
/** Before sign-in the form's CSRF token is also in this cookie (double submit), as there is no session yet. */
export const SIGN_IN_CSRF_COOKIE = 'strongroom_admin_csrf';

declare module 'fastify' {
  interface FastifyRequest {
    adminSession: AdminSession | null;
  }
}

/** The cookies of a request, by name (the first of a repeated name wins). */
export function cookiesOf(request: FastifyRequest): Record<string, string> {
  const cookies: Record<string, string> = {};
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at <= 0) continue;
    const name = part.slice(0, at).trim();
    if (!(name in cookies)) {
      try {
        cookies[name] = decodeURIComponent(part.slice(at + 1).trim());
      } catch {
        // A value that is not percent-encoding is no cookie of ours.
      }
    }
  }
  return cookies;
}

/** A Set-Cookie value for the console's path: HttpOnly, SameSite=Strict, Secure over HTTPS. */
export function adminCookie(request: FastifyRequest, name: string, value: string, maxAgeSeconds: number): string {
  return [`${name}=${value}`, 'Path=/admin', `Max-Age=${maxAgeSeconds}`, 'HttpOnly', 'SameSite=Strict', ...(request.protocol === 'https' ? ['Secure'] : [])].join('; ');
}

function csrfOf(request: FastifyRequest): string | undefined {
  const body = request.body as Record<string, unknown> | undefined;
  return body && typeof body === 'object' && typeof body._csrf === 'string' ? body._csrf : undefined;
}

const MISSING_CSRF = 'This form carries no valid CSRF token (it may be from an older page): reload the page and try again.';

export function installAdminAccess(app: FastifyInstance, deps: { sessions: AdminSessions; allowedIps: readonly string[] }): void {
  const allowed = deps.allowedIps.length > 0 ? ipMatcher(deps.allowedIps) : null;
  const known: readonly AccessRule[] = [adminAccess.signIn, adminAccess.session];
  app.decorateRequest('adminSession', null);
  app.addHook('onRoute', (route) => {
    if (!known.includes(route.config?.access as AccessRule)) {
      throw new Error(`Admin console route ${String(route.method)} ${route.url} must declare adminAccess.signIn or adminAccess.session; refusing to start.`);
    }
  });

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (allowed && !allowed.has(request.ip)) throw new Forbidden('The admin console cannot be reached from your address (ADMIN_ALLOWED_IPS).');
    if (request.routeOptions.config.access !== adminAccess.session) return;
    const session = await deps.sessions.find(cookiesOf(request)[SESSION_COOKIE]);
    if (session) {
      request.adminSession = session;
      return;
    }
    if (request.method === 'GET' || request.method === 'HEAD') {
      return reply.redirect('/admin/login', 303);
    }
    throw new Unauthorized('Your admin session has ended: sign in again.');
  });

  // Before the body's own schema, so a form without its token is refused as such.
  app.addHook('preValidation', async (request) => {
    if (request.method !== 'POST') return;
    const sent = csrfOf(request);
    const expected = request.adminSession?.csrfToken ?? (request.routeOptions.config.access === adminAccess.signIn ? cookiesOf(request)[SIGN_IN_CSRF_COOKIE] : undefined);
    if (!expected || typeof sent !== 'string' || !safeEqual(sent, expected)) throw new Forbidden(MISSING_CSRF);
  });
}
