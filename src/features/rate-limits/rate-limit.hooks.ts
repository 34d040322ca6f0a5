import type { FastifyInstance, FastifyReply, FastifyRequest, preParsingAsyncHookHandler } from 'fastify';
import { ServiceUnavailable, TooManyRequests } from '../../http/errors.js';
import { LimitsUnavailable } from './failover-store.js';
import type { Decision } from './limit-store.js';
import type { RateLimits } from './rate-limits.js';

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
