import type { FastifyInstance, FastifyRequest, onRequestAsyncHookHandler } from 'fastify';
import { Forbidden, Unauthorized } from './errors.js';

/** Who is calling, as proven by a bearer token. */
export interface UserPrincipal {
  kind: 'user';
  userId: string;
  email: string;
  securityStamp: string;
  deviceIdentifier: string | null;
  clientId: string;
  scopes: string[];
  amr: string[];
}

export interface OrganizationPrincipal {
  kind: 'organization';
  organizationId: string;
  clientId: string;
  scopes: string[];
}

export interface ServiceAccountPrincipal {
  kind: 'serviceAccount';
  serviceAccountId: string;
  organizationId: string;
  accessTokenId: string;
  clientId: string;
  scopes: string[];
}

export type Principal = UserPrincipal | OrganizationPrincipal | ServiceAccountPrincipal;

/** Turns a bearer token into a principal, or null when the token is not valid now. */
export type Authenticator = (token: string) => Promise<Principal | null>;

/**
 * A route's declared access rule. `principals` lists who may call (empty: anyone);
 * `scope` is the OAuth scope the token must carry; `authorize` adds a rule that needs the
 * request (organization role, permission flag...).
 */
export interface AccessRule {
  readonly name: string;
  readonly principals: readonly Principal['kind'][];
  readonly scope?: string;
  /** The token's amr must include one of these (the events service's "Application" policy). */
  readonly amr?: readonly string[];
  readonly authorize?: (request: FastifyRequest, principal: Principal) => Promise<void> | void;
  /**
   * For a rule with no principals: a check of the request itself (a shared token, the connecting
   * address), throwing Unauthorized or Forbidden; the Prometheus scraper is such a caller.
   */
  readonly admit?: (request: FastifyRequest) => void;
}

export const access = {
  anonymous: { name: 'anonymous', principals: [] },
  user: { name: 'user', principals: ['user'], scope: 'api' },
  /** Bitwarden's "Application" policy: a user token from a real client login. */
  application: { name: 'application', principals: ['user'], scope: 'api', amr: ['Application', 'external'] },
  organizationApiKey: { name: 'organizationApiKey', principals: ['organization'], scope: 'api.organization' },
  serviceAccount: { name: 'serviceAccount', principals: ['serviceAccount'], scope: 'api.secrets' },
  /**
   * Bitwarden's "secrets" policy (the Secrets Manager routes): a user token with scope `api`, or
   * a machine account's with `api.secrets`. Which organization and resources the caller reaches
   * is decided per request (src/features/secrets-manager/sm-access.ts).
   */
  userOrServiceAccount: {
    name: 'userOrServiceAccount',
    principals: ['user', 'serviceAccount'],
    authorize(_request, principal) {
      if (!principal.scopes.includes(principal.kind === 'user' ? 'api' : 'api.secrets')) throw new Unauthorized();
    },
  },
} as const satisfies Record<string, AccessRule>;

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: AccessRule;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

export function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/** The calling user of a route whose rule admits only users. */
export function currentUser(request: FastifyRequest): UserPrincipal {
  const principal = request.principal;
  if (principal?.kind !== 'user') throw new Unauthorized();
  return principal;
}

function guard(rule: AccessRule, authenticate: Authenticator): onRequestAsyncHookHandler {
  return async (request) => {
    if (rule.principals.length === 0) {
      rule.admit?.(request);
      return;
    }
    const token = bearerToken(request);
    const principal = token ? await authenticate(token) : null;
    if (!principal || !rule.principals.includes(principal.kind)) throw new Unauthorized();
    if (rule.scope && !principal.scopes.includes(rule.scope)) throw new Unauthorized();
    if (rule.amr && (principal.kind !== 'user' || !principal.amr.some((a) => rule.amr?.includes(a)))) {
      throw new Forbidden();
    }
    request.principal = principal;
    if (rule.authorize) await rule.authorize(request, principal);
  };
}

/**
 * Default deny: every route registered in this context must declare `config.access` and a
 * response schema, or registration fails and the server refuses to start.
 */
export function enforceAccessRules(app: FastifyInstance, authenticate: Authenticator): void {
  app.addHook('onRoute', (route) => {
    const rule = route.config?.access;
    const where = `${Array.isArray(route.method) ? route.method.join(',') : route.method} ${route.url}`;
    if (!rule) throw new Error(`Route ${where} declares no access rule (config.access); refusing to start.`);
    if (!route.schema?.response) throw new Error(`Route ${where} declares no response schema; refusing to start.`);
    const existing = route.onRequest ? [route.onRequest].flat() : [];
    route.onRequest = [guard(rule, authenticate), ...existing];
    if (rule.principals.length > 0) {
      route.schema = { ...route.schema, security: [{ bearer: [] }] };
    }
  });
}
