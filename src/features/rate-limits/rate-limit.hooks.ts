import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingAsyncHookHandler } from 'fastify';
import type { Principal } from '../../http/access.js';
import { ServiceUnavailable, TooManyRequests } from '../../http/errors.js';
import { isGuid } from '../../http/ids.js';
import { LimitsUnavailable } from './failover-store.js';
import type { Decision } from './limit-store.js';
import type { CallerLimitKind, RateLimits } from './rate-limits.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The per-caller limit the route counts against (docs/security.md): an expensive route's kind of work. */
    callerLimit?: Exclude<CallerLimitKind, 'collectEvents'>;
  }
}

const seconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));
const inWords = (n: number) => `${n} ${n === 1 ? 'second' : 'seconds'}`;

async function orUnavailable<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof LimitsUnavailable) throw new ServiceUnavailable(error.message, error.retryAfterSeconds);
    throw error;
  }
}

/**
 * The public API's limit headers, on every answer to an organization token (errors included):
 * `X-RateLimit-Limit` the organization's burst (the most requests it can send at once),
 * `X-RateLimit-Remaining` the requests it can send right now, `X-RateLimit-Reset` the seconds
 * (a delta, rounded up) until its bucket is full again.
 */
function limitHeaders(reply: FastifyReply, burst: number, decision: Decision): void {
  const state = decision.buckets[0] ?? { remaining: 0, resetMs: 0 };
  void reply.header('x-ratelimit-limit', String(burst));
  void reply.header('x-ratelimit-remaining', String(state.remaining));
  void reply.header('x-ratelimit-reset', String(Math.ceil(state.resetMs / 1000)));
}

/**
 * Limits every route under `publicPrefix` (the API service's `/public`) per organization, for
 * requests made with an organization API-key token. Installed on the app before the services, so
 * that it sees every route registered after it; it runs before the body is read but after the
 * access guard (onRequest), which is what names the organization.
 */
export function installPublicApiLimit(app: FastifyInstance, limits: RateLimits, publicPrefix: string): void {
  const limiter = limits.organization;
  if (!limiter) return;
  const prefix = publicPrefix.toLowerCase();
  const hook: preParsingAsyncHookHandler = async (request: FastifyRequest, reply: FastifyReply) => {
    const principal = request.principal;
    if (principal?.kind !== 'organization') return;
    const decision = await orUnavailable(limiter.take(principal.organizationId));
    limitHeaders(reply, limiter.burst, decision);
    if (!decision.allowed) {
      const wait = seconds(decision.retryAfterMs);
      throw new TooManyRequests(`Too many requests for this organization. Try again in ${inWords(wait)}.`, wait);
    }
  };
  app.addHook('onRoute', (route) => {
    const url = route.url.toLowerCase();
    if (url !== prefix && !url.startsWith(`${prefix}/`)) return;
    route.preParsing = [...(route.preParsing ? [route.preParsing].flat() : []), hook];
  });
}

/**
 * The per-endpoint IP rules, for every service: checked first thing (before authentication), so
 * that a flood costs as little as possible. The client address is the one Fastify derives,
 * honouring TRUST_PROXY.
 */
export function installIpRules(app: FastifyInstance, limits: RateLimits): void {
  const rules = limits.ipRules;
  if (!rules) return;
  app.addHook('onRequest', async (request) => {
    const result = await orUnavailable(rules.take(request.method, request.url, request.ip));
    if (result && !result.decision.allowed) {
      const wait = seconds(result.decision.retryAfterMs);
      throw new TooManyRequests(`Too many requests from this address. Try again in ${inWords(wait)}.`, wait);
    }
  });
}

const WHAT: Record<CallerLimitKind, string> = {
  collect: 'event uploads',
  collectEvents: 'events',
  import: 'imports',
  export: 'exports',
  bulk: 'bulk changes',
  hibp: 'data breach lookups',
  emergencyInvite: 'emergency access invitations',
  deviceApproval: 'device approval requests',
};

/** Who a per-caller limit counts: the user, the machine account or the organization's API key. */
function callerKey(principal: Principal): string {
  switch (principal.kind) {
    case 'user':
      return `u:${principal.userId}`;
    case 'serviceAccount':
      return `sa:${principal.serviceAccountId}`;
    case 'organization':
      return `o:${principal.organizationId}`;
  }
}

/** The organization a request acts in: the token's, or the one its path or query names. */
function organizationOf(request: FastifyRequest, principal: Principal): string | null {
  if (principal.kind !== 'user') return principal.organizationId;
  const params = request.params as Record<string, unknown> | undefined;
  const query = request.query as Record<string, unknown> | undefined;
  const named = params?.organizationId ?? params?.orgId ?? query?.organizationId;
  return typeof named === 'string' && isGuid(named) ? named.toLowerCase() : null;
}

/**
 * Takes `cost` from the caller's `kind` bucket (and its organization's), refusing with 429 and
 * Retry-After when it is empty. A no-op for a kind that is turned off.
 */
export async function takeCallerLimit(limits: RateLimits, kind: CallerLimitKind, principal: Principal, organizationId: string | null, cost = 1): Promise<void> {
  const taking = limits.caller(kind, callerKey(principal), organizationId, cost);
  if (!taking) return;
  const decision = await orUnavailable(taking);
  if (!decision.allowed) {
    const wait = seconds(decision.retryAfterMs);
    throw new TooManyRequests(`Too many ${WHAT[kind]}. Try again in ${inWords(wait)}.`, wait);
  }
}

/**
 * The per-caller limits of the routes that declare `config.callerLimit`: checked after the access
 * guard has named the caller (onRequest) and before the body is read, so a refused request
 * costs neither.
 */
export function installCallerLimits(app: FastifyInstance, limits: RateLimits): void {
  app.addHook('onRoute', (route) => {
    const kind = route.config?.callerLimit;
    if (!kind) return;
    const hook: preParsingAsyncHookHandler = async (request: FastifyRequest) => {
      const principal = request.principal;
      if (principal) await takeCallerLimit(limits, kind, principal, organizationOf(request, principal));
    };
    route.preParsing = [...(route.preParsing ? [route.preParsing].flat() : []), hook];
  });
}
