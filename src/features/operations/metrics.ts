import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sql } from 'kysely';
import type { Config } from '../../config/config.js';
import { ipMatcher, plainAddress } from '../../config/rate-limit-settings.js';
import type { Database } from '../../db/database.js';
import type { JobRunResult } from '../../db/leases.js';
import type { AccessRule } from '../../http/access.js';
import { bearerToken } from '../../http/access.js';
import { Forbidden, Unauthorized } from '../../http/errors.js';

/**
 * The server's Prometheus metrics (GET /metrics, off unless METRICS_ENABLED; docs/operations.md).
 * Each app has its own registry, so that several apps in one process (tests) count apart.
 * Counters are moved where things happen (the request hook, the sync cache, the login); gauges
 * of state (pool, hub, outbox) are read when Prometheus scrapes.
 */

const LOGIN_FAILURE_REASONS = ['password', 'two-factor', 'throttled', 'disabled', 'api-key', 'sso-required', 'sso'] as const;
export type LoginFailureReason = (typeof LOGIN_FAILURE_REASONS)[number];

/** The fleet's scheduled jobs, each behind its lease (src/db/leases.ts). */
export const SCHEDULED_JOBS = ['event-retention', 'send-purge', 'file-sweep', 'emergency-access-timeout', 'emergency-access-reminder'] as const;
export type ScheduledJob = (typeof SCHEDULED_JOBS)[number];

/** What features report; a no-op until the app wires metrics in. */
export interface Instruments {
  loginFailed(reason: LoginFailureReason): void;
  syncCacheLookup(hit: boolean): void;
  /** A scheduled job's run ended: `ran` when this instance held the lease and did the work. */
  scheduledJobRun(job: ScheduledJob, result: JobRunResult): void;
  /** A push outbox message's attempt ended (features/push-delivery): sent, retried later, or dropped. */
  pushDelivery(channel: string, result: PushDeliveryResult): void;
}

export const PUSH_CHANNELS = ['relay', 'web-push'] as const;
const PUSH_DELIVERY_RESULTS = ['sent', 'retried', 'dropped'] as const;
export type PushDeliveryResult = (typeof PUSH_DELIVERY_RESULTS)[number];

export const noInstruments: Instruments = { loginFailed: () => undefined, syncCacheLookup: () => undefined, scheduledJobRun: () => undefined, pushDelivery: () => undefined };

export interface MetricsSources {
  database: Database;
  /** Open notification hub connections on this instance. */
  hubConnections(): number;
  /** Push outbox messages waiting, per channel (fleet-wide: they are rows); absent without channels. */
  pushOutboxPending?(): Promise<Record<string, number>>;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** prom-client is loaded only when METRICS_ENABLED asks for metrics. */
export async function createMetrics() {
  const { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } = await import('prom-client');
  const registry = new Registry();
  let sources: MetricsSources | undefined;

  const requests = new Counter({
    name: 'strongroom_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status code.',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'strongroom_http_request_duration_seconds',
    help: 'Time from receiving a request to the end of its answer, by method and route pattern.',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const errors = new Counter({
    name: 'strongroom_http_errors_total',
    help: 'HTTP answers with a status of 400 or more, by status code.',
    labelNames: ['status_code'] as const,
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'strongroom_rate_limit_rejections_total',
    help: 'Requests refused with 429 (IP rules, the public API limit, the login throttle, the password-hashing queue, hub connection caps), by route pattern.',
    labelNames: ['route'] as const,
    registers: [registry],
  });
  const loginFailures = new Counter({
    name: 'strongroom_login_failures_total',
    help: 'Refused logins at the token endpoint: wrong password or unknown account, throttled, disabled account, wrong personal API key.',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const syncCache = new Counter({
    name: 'strongroom_sync_cache_lookups_total',
    help: 'Sync answers looked up in the sync cache, by result (hit: the vault part was reused).',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  const jobRuns = new Counter({
    name: 'strongroom_scheduled_job_runs_total',
    help: 'Runs of the scheduled jobs on this instance, by job and result: ran (this instance held the fleet-wide lease and did the work), skipped (another instance holds it) or failed (the error is logged).',
    labelNames: ['job', 'result'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'strongroom_db_pool_connections',
    help: 'Database connections by state: total open, idle, and queries waiting for one (PostgreSQL; SQLite has one connection).',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      if (!sources) return;
      const stats = sources.database.poolStats();
      this.set({ state: 'total' }, stats.total);
      this.set({ state: 'idle' }, stats.idle);
      this.set({ state: 'waiting' }, stats.waiting);
    },
  });
  new Gauge({
    name: 'strongroom_hub_connections',
    help: 'Open notification hub (WebSocket) connections on this instance.',
    registers: [registry],
    collect() {
      if (sources) this.set(sources.hubConnections());
    },
  });
  new Gauge({
    name: 'strongroom_integration_outbox_backlog',
    help: 'Events written but not yet relayed to the integrations (the whole fleet shares one outbox).',
    registers: [registry],
    async collect() {
      if (sources) this.set(await outboxBacklog(sources.database));
    },
  });
  const pushDeliveries = new Counter({
    name: 'strongroom_push_deliveries_total',
    help: 'Attempts of this instance to send a push outbox message (mobile push relay, Web Push), by channel and result: sent, retried (failed, tried again later) or dropped (refused for good or out of attempts).',
    labelNames: ['channel', 'result'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'strongroom_push_outbox_pending',
    help: 'Push outbox messages not yet sent, by channel (the whole fleet shares one outbox). A growing number means the relay or the browsers\' push services are not reached.',
    labelNames: ['channel'] as const,
    registers: [registry],
    async collect() {
      if (!sources?.pushOutboxPending) return;
      for (const [channel, count] of Object.entries(await sources.pushOutboxPending())) this.set({ channel }, count);
    },
  });
  collectDefaultMetrics({ register: registry });

  const instruments: Instruments = {
    loginFailed: (reason) => loginFailures.inc({ reason }),
    syncCacheLookup: (hit) => syncCache.inc({ result: hit ? 'hit' : 'miss' }),
    scheduledJobRun: (job, result) => jobRuns.inc({ job, result }),
    pushDelivery: (channel, result) => pushDeliveries.inc({ channel, result }),
  };
  // Every label set the tests and dashboards look for exists from the start, at 0.
  for (const reason of LOGIN_FAILURE_REASONS) loginFailures.inc({ reason }, 0);
  for (const result of ['hit', 'miss']) syncCache.inc({ result }, 0);
  for (const job of SCHEDULED_JOBS) for (const result of ['ran', 'skipped', 'failed']) jobRuns.inc({ job, result }, 0);
  for (const channel of PUSH_CHANNELS) for (const result of PUSH_DELIVERY_RESULTS) pushDeliveries.inc({ channel, result }, 0);

  return {
    registry,
    instruments,
    /** Where the scrape-time gauges read from; set once the features exist. */
    watch(next: MetricsSources): void {
      sources = next;
    },
    /** Counts every answer of the app: requests, latency, errors, 429s. */
    install(app: FastifyInstance): void {
      app.addHook('onResponse', async (request, reply) => {
        const route = request.routeOptions.url ?? '(unmatched)';
        const status = reply.statusCode;
        requests.inc({ method: request.method, route, status_code: String(status) });
        latency.observe({ method: request.method, route }, reply.elapsedTime / 1000);
        if (status >= 400) errors.inc({ status_code: String(status) });
        if (status === 429) rateLimited.inc({ route });
      });
    },
  };
}

export type Metrics = Awaited<ReturnType<typeof createMetrics>>;

/**
 * Events after the relay's cursor. No relay row yet (no instance relayed): nothing is waiting,
 * since the relay starts from the newest event.
 */
async function outboxBacklog(database: Database): Promise<number> {
  const row = await database.db
    .selectFrom('events')
    .select(sql<number | string>`count(*)`.as('n'))
    .where('seq', '>', (eb) =>
      eb
        .selectFrom('integration_relay')
        .select(sql<number>`coalesce(max(cursor_seq), (select coalesce(max(seq), 0) from events))`.as('cursor')),
    )
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/**
 * The access rule of /metrics: the METRICS_TOKEN bearer token and/or a connecting address in
 * METRICS_ALLOWED_ADDRESSES (the socket's own address: a forwarded header could be forged).
 */
export function metricsAccess(config: Pick<Config, 'metricsToken' | 'metricsAllowedAddresses'>): AccessRule {
  const allowed = config.metricsAllowedAddresses.length > 0 ? ipMatcher(config.metricsAllowedAddresses) : null;
  const expected = config.metricsToken === undefined ? null : digest(config.metricsToken);
  return {
    name: 'metricsScraper',
    principals: [],
    admit(request: FastifyRequest) {
      if (allowed && !allowed.has(plainAddress(request.socket.remoteAddress ?? ''))) {
        throw new Forbidden('This address may not read the metrics (METRICS_ALLOWED_ADDRESSES).');
      }
      if (expected) {
        const token = bearerToken(request);
        if (token === null || !timingSafeEqual(digest(token), expected)) throw new Unauthorized('The metrics need the bearer token set in METRICS_TOKEN.');
      }
    },
  };
}
