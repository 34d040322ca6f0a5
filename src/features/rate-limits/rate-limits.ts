import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Clock } from '../../shared/clock.js';
import type { Config, ServiceName } from '../../config/config.js';
import { ipMatcher, periodMs, plainAddress, type IpRule } from '../../config/rate-limit-settings.js';
import { createFailoverStore } from './failover-store.js';
import { createMemoryStore, createRedisStore, type Bucket, type Decision, type LimitStore } from './limit-store.js';

export interface RateLimitLog {
  warn(details: Record<string, unknown>, message: string): void;
}

/** A short fixed-size stand-in for text a caller chooses (a username), so keys stay small. */
export function keyDigest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

interface CompiledRule {
  index: number;
  rule: IpRule;
  verb: string | null;
  path: RegExp;
  bucket: { intervalMs: number; burst: number };
}

function compile(rule: IpRule, index: number): CompiledRule {
  const [verb, ...rest] = rule.Endpoint === '*' ? ['*', '*'] : rule.Endpoint.split(':');
  const path = rest.join(':').toLowerCase();
  const pattern = path
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  const ms = periodMs(rule.Period);
  return {
    index,
    rule,
    verb: verb === '*' || verb === undefined ? null : verb.toUpperCase(),
    path: new RegExp(`^${pattern}$`),
    bucket: { intervalMs: ms / rule.Limit, burst: rule.Limit },
  };
}

/** `/api/accounts/prelogin?x=1` -> the api service and `/accounts/prelogin` (prefixed mounting). */
function serviceOf(url: string, config: Pick<Config, 'services' | 'servicePrefixes'>): { service: ServiceName; path: string } | null {
  const raw = (url.split('?')[0] ?? '').toLowerCase().replace(/\/+$/, '') || '/';
  if (!config.servicePrefixes) {
    const only = config.services[0];
    return only ? { service: only, path: raw } : null;
  }
  const match = /^\/([a-z]+)(\/.*)?$/.exec(raw);
  const service = config.services.find((name) => name === match?.[1]);
  return service ? { service, path: match?.[2] ?? '/' } : null;
}

export type CallerLimitKind = 'collect' | 'collectEvents' | 'import' | 'export' | 'bulk' | 'hibp' | 'emergencyInvite' | 'deviceApproval';

const CALLER_LIMIT_SETTINGS = {
  collect: 'rateLimitCollect',
  collectEvents: 'rateLimitCollectEvents',
  import: 'rateLimitImport',
  export: 'rateLimitExport',
  bulk: 'rateLimitBulk',
  hibp: 'rateLimitHibp',
  emergencyInvite: 'rateLimitEmergencyInvite',
  deviceApproval: 'rateLimitDeviceApproval',
} as const satisfies Record<CallerLimitKind, keyof Config>;

/** Each kind's bucket from its `requests/period` setting; null when it is `0`. */
function callerLimitBuckets(config: Config): Record<CallerLimitKind, { intervalMs: number; burst: number } | null> {
  const entries = Object.entries(CALLER_LIMIT_SETTINGS).map(([kind, setting]) => {
    const [limit, period] = config[setting].split('/');
    if (!period) return [kind, null];
    const burst = Number(limit);
    return [kind, { intervalMs: periodMs(period) / burst, burst }];
  });
  return Object.fromEntries(entries) as Record<CallerLimitKind, { intervalMs: number; burst: number } | null>;
}

/**
 * A bucket that takes `cost` requests at once: GCRA's arithmetic only ever uses the interval and
 * the bucket's capacity in time (burst × interval), so n requests are one of n intervals from a
 * bucket of the same capacity.
 */
function scaled(bucket: Bucket, cost: number): Bucket {
  return cost === 1 ? bucket : { key: bucket.key, intervalMs: bucket.intervalMs * cost, burst: bucket.burst / cost };
}

/**
 * Every limit of the server over one store: Redis (behind its breaker) when REDIS_URL is set,
 * otherwise this process.
 */
export async function createRateLimits(deps: { config: Config; clock: Clock; log?: RateLimitLog }) {
  const { config, clock } = deps;
  const local = createMemoryStore({ maxKeys: config.rateLimitMemoryKeys });
  let redis: Redis | undefined;
  let store: LimitStore = local;
  if (config.redisUrl) {
    // ioredis is loaded only when REDIS_URL is set.
    const { Redis } = await import('ioredis');
    redis = new Redis(config.redisUrl, {
      commandTimeout: config.rateLimitRedisTimeoutMs,
      // A lost connection fails the waiting checks at once; the breaker decides what happens next.
      maxRetriesPerRequest: 0,
      connectTimeout: Math.max(1000, config.rateLimitRedisTimeoutMs),
      // Checks arriving in the same tick share one round trip.
      enableAutoPipelining: true,
    });
    // Failures are counted per call by the breaker; without a listener ioredis reports each reconnect as unhandled.
    redis.on('error', () => undefined);
    store = createFailoverStore({
      primary: createRedisStore(redis),
      local,
      mode: config.rateLimitRedisFailure,
      maxRedisTimeoutsThreshold: config.maxRedisTimeoutsThreshold,
      slidingWindowSeconds: config.slidingWindowSeconds,
      clock,
      onFailure(error, tripped) {
        deps.log?.warn(
          { err: error, mode: config.rateLimitRedisFailure },
          tripped
            ? `rate limits: Redis failed ${config.maxRedisTimeoutsThreshold} times; not calling it for up to ${config.slidingWindowSeconds} s`
            : 'rate limits: Redis did not answer',
        );
      },
    });
  }
  const now = () => clock.now().getTime();

  const organizationBucket = (organizationId: string): Bucket => ({
    key: `org:${organizationId}`,
    intervalMs: 60_000 / config.publicApiRateLimit,
    burst: config.publicApiBurst,
  });

  const callerBuckets = callerLimitBuckets(config);
  const rules = config.ipRateLimiting ? config.ipRateLimitRules.map(compile) : [];
  const whitelist = ipMatcher(config.ipRateLimitWhitelist);

  return {
    store,
    /** The public API's per-organization limit, or null when PUBLIC_API_RATE_LIMIT is 0. */
    organization:
      config.publicApiRateLimit > 0
        ? {
            burst: config.publicApiBurst,
            /** Takes one request from the organization's bucket. */
            take: (organizationId: string): Promise<Decision> => store.consume([organizationBucket(organizationId)], now()),
          }
        : null,
    /** The IP rules, or null when they are off. */
    ipRules:
      rules.length > 0
        ? {
            /**
             * Takes one request from every rule matching the request for this address; null when
             * no rule applies (no rule matches, or the address is whitelisted).
             */
            async take(method: string, url: string, ip: string): Promise<{ decision: Decision; rules: IpRule[] } | null> {
              if (whitelist.has(ip)) return null;
              const located = serviceOf(url, config);
              if (!located) return null;
              const verb = method.toUpperCase();
              const matched = rules.filter(
                (r) => (r.rule.Service === undefined || r.rule.Service === located.service) && (r.verb === null || r.verb === verb) && r.path.test(located.path),
              );
              if (matched.length === 0) return null;
              const address = plainAddress(ip);
              const buckets = matched.map((r) => ({ key: `ip:${r.index}:${located.service}:${address}`, ...r.bucket }));
              return { decision: await store.consume(buckets, now()), rules: matched.map((r) => r.rule) };
            },
          }
        : null,
    /**
     * The per-caller limits of the expensive routes (collect, imports, exports, bulk changes):
     * takes `cost` from the caller's bucket of `kind`, and from the organization's when the route
     * belongs to one. Null for a kind that is turned off.
     */
    caller(kind: CallerLimitKind, callerKey: string, organizationId: string | null, cost = 1): Promise<Decision> | null {
      const limit = callerBuckets[kind];
      if (!limit) return null;
      const buckets = [scaled({ key: `caller:${kind}:${callerKey}`, ...limit }, cost)];
      if (organizationId && kind !== 'collect' && kind !== 'collectEvents') {
        buckets.push(scaled({ key: `caller-org:${kind}:${organizationId}`, intervalMs: limit.intervalMs / config.rateLimitOrganizationFactor, burst: limit.burst * config.rateLimitOrganizationFactor }, cost));
      }
      return store.consume(buckets, now());
    },
    async close() {
      redis?.disconnect();
    },
  };
}

export type RateLimits = Awaited<ReturnType<typeof createRateLimits>>;
