/**
 * Restarts under load and what a fleet adds (#43), with the capacity generator (bench/capacity/):
 *
 * 1. Restart under load. While the model runs at a rate one instance holds comfortably, the
 *    instance is restarted (SIGTERM, started again on the same port, database and DATA_DIR), on
 *    SQLite and on PostgreSQL: requests failed, how long until p95 is back in its band, and what
 *    the first syncs cost with cold caches against warm ones. Then a rolling restart of a fleet
 *    of two behind nginx (fleet/fleet.ts, as the fleet test does it) on PostgreSQL.
 * 2. The fleet, honestly. The same fleet with each instance pinned to its own core (taskset),
 *    one instance and two played in alternation at each rate:
 *    CPU per model request of each process (instances, PostgreSQL's backends, nginx, Redis, the
 *    generator), the largest rate one instance on core 0 holds within the limits, the rate two
 *    instances on cores 0 and 1 hold, and the model's prediction of the second from the first.
 *    PostgreSQL, nginx, Redis and the generator are not pinned: they share both cores.
 *
 *   npm run bench -- capacity-fleet
 *   BENCH_QUICK=1 npx tsx bench/capacity-fleet.ts        # CI: small and short; fails on a restart's error behind nginx
 *
 * Options (environment): BENCH_PEOPLE (2000 seeded), BENCH_RATE_PEOPLE (5000: the restarts'
 * rate), BENCH_RESTART_SECONDS (60), BENCH_STEP_SECONDS (30), BENCH_LADDER_FROM (2000),
 * BENCH_LADDER_FACTOR (1.3: each step's rate over the last's), BENCH_RETRIES (1: plays of a step
 * that broke a limit before the ladder stops),
 * BENCH_SCENARIOS (restart,fleet), BENCH_ENGINES, BENCH_POSTGRES_URL. nginx and redis-server
 * must be installed for the fleet.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { play } from './capacity/arrivals.js';
import { createClient, type Client } from './capacity/client.js';
import { PostgresCpu, cpuMs } from './capacity/cpu.js';
import { createInstance, type Instance } from './capacity/instance.js';
import { modelArrivals } from './capacity/operations.js';
import { seedPopulation, type Population } from './capacity/population.js';
import { held, ladders, LIMITS, REQUESTS_PER_1000, type Processes, type StepResult, type Target } from './capacity/steps.js';
import { quantile, recovery, Timeline, windows } from './capacity/timeline.js';
import { buildServer, freePort, startFleet } from '../fleet/fleet.js';
import { createTestTls, type TestTls } from '../test/support/tls.js';
import { databaseFor, ENGINES, summary, type SummaryRow } from './harness.js';

const QUICK = process.env.BENCH_QUICK === '1';
const PEOPLE = Number(process.env.BENCH_PEOPLE ?? (QUICK ? 60 : 2000));
const RATE_PEOPLE = Number(process.env.BENCH_RATE_PEOPLE ?? (QUICK ? 600 : 5000));
const RESTART_SECONDS = Number(process.env.BENCH_RESTART_SECONDS ?? (QUICK ? 14 : 60));
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? (QUICK ? 3 : 30));
const LADDER_FROM = Number(process.env.BENCH_LADDER_FROM ?? (QUICK ? 600 : 2000));
const LADDER_FACTOR = Number(process.env.BENCH_LADDER_FACTOR ?? 1.3);
/** A step that breaks a limit is played again this many times (held when one of them holds). */
const RETRIES = Number(process.env.BENCH_RETRIES ?? (QUICK ? 0 : 1));
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'restart,fleet').split(','));
/** When in a restart run the restart begins, and how long before it counts as warm. */
const RESTART_AT = Math.round(RESTART_SECONDS * 0.4) * 1000;
const WARM_FROM = Math.min(5000, RESTART_AT / 2);
const COLD_MS = 10_000;

const log = (line: string) => console.error(`[capacity-fleet ${new Date().toISOString().slice(11, 19)}] ${line}`);
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const people = (n: number) => n.toLocaleString('en-US');
const load = () => loadavg().map((l) => l.toFixed(2)).join(', ');
const out = (line = '') => console.log(line);
let failures = 0;

/** A summary row; one without a figure (a quick run's recovery with too few answers to tell) is left out, as JSON has no NaN. */
function row(r: SummaryRow): void {
  if (Number.isFinite(r.strongroom)) summary('capacity-fleet', r);
  else log(`no figure for the summary row "${r.what}"`);
}

/** Settings of every instance: as capacity.ts runs its server (cloud, 600,000-iteration hashes, no per-IP rules: one client address). */
const baseEnv = (secretsKey: string): Record<string, string> => ({
  PASSWORD_ITERATIONS: '600000',
  DEPLOYMENT: 'cloud',
  MAX_CONNECTIONS_PER_IP: '0',
  IP_RATE_LIMITING: 'false',
  LOG_LEVEL: 'warn',
  SECRETS_KEY: secretsKey,
  // The tokens' issuer: one for the single instance and the fleet, which share the seeded people.
  PUBLIC_URL: 'http://vault.bench.test',
});

interface RestartTiming {
  restartAt: number;
  /** When the server answered again (one instance) or the last one was back in nginx's rotation. */
  readyAt: number;
  detail: string;
}

/** The sync cache's hits and misses so far, from the instance's /metrics (METRICS_ENABLED). */
async function cacheLookups(client: Client): Promise<{ hit: number; miss: number }> {
  const text = await client.send<string>('GET', '/metrics').catch(() => '');
  if (!text) return { hit: NaN, miss: NaN };
  const count = (result: string) => Number(new RegExp(`strongroom_sync_cache_lookups_total\\{result="${result}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { hit: count('hit'), miss: count('miss') };
}

const hitRate = (from: { hit: number; miss: number }, to: { hit: number; miss: number }) => {
  const hit = to.hit - from.hit;
  const all = hit + to.miss - from.miss;
  return `${fmt((100 * hit) / Math.max(1, all), 0)} % of ${all}`;
};

/**
 * Plays the model at RATE_PEOPLE's rates for RESTART_SECONDS, calling `restart` at RESTART_AT;
 * prints what failed, the latency by 5-second window, the recovery and the cold syncs.
 */
async function underLoad(label: string, target: Target, restart: (timeline: Timeline) => Promise<RestartTiming>, onRunStart?: () => Promise<void>): Promise<{ errors: number; back: number; cold: number[]; warm: number[]; sentBefore: number }> {
  await play(modelArrivals(target.client, target.population, { people: RATE_PEOPLE, hubUrl: target.hubUrl, ca: target.ca }), QUICK ? 3 : 10);
  const timeline = new Timeline();
  const arrivals = timeline.timed(modelArrivals(target.client, target.population, { people: RATE_PEOPLE, hubUrl: target.hubUrl, ca: target.ca }));
  const loadBefore = load();
  await onRunStart?.();
  const playing = play(arrivals, RESTART_SECONDS);
  await new Promise((resolve) => setTimeout(resolve, RESTART_AT - timeline.now()));
  const timing = await restart(timeline);
  const result = await playing;
  const end = RESTART_SECONDS * 1000;
  const all = timeline.samples;
  const errors = all.filter((s) => !s.ok).length;
  const back = recovery(all, WARM_FROM, timing.restartAt, timing.readyAt, end);
  const syncs = all.filter((s) => s.name === 'sync');
  const syncBack = recovery(syncs, WARM_FROM, timing.restartAt, timing.readyAt, end);
  const warm = timeline.between(WARM_FROM, timing.restartAt, 'sync').filter((s) => s.ok).map((s) => s.ms);
  const cold = timeline.between(timing.readyAt, timing.readyAt + COLD_MS, 'sync').filter((s) => s.ok).map((s) => s.ms);
  out(`**${label}** under the rates of ${people(RATE_PEOPLE)} people (${fmt((RATE_PEOPLE * REQUESTS_PER_1000) / 1000)} requests a second), ${RESTART_SECONDS} s, restart at ${RESTART_AT / 1000} s; load average ${loadBefore} before, ${load()} after. ${timing.detail}\n`);
  out(`- ${all.length} requests, **${errors} failed**${errors > 0 ? ` (${[...result.recorder.problems].slice(0, 4).map(([p, n]) => `${n}× ${p}`).join('; ')})` : ''}.`);
  out(`- p95 of all requests: ${fmt(back.before, 0)} ms before (1-second windows' band ${fmt(back.band, 0)} ms); back in the band ${fmt(back.back / 1000)} s after the restart began, ${fmt((timing.readyAt - timing.restartAt) / 1000)} s after which the ${label.includes('fleet') ? 'last instance was back in the rotation' : 'server answered again'}.`);
  out(`- Syncs: p95 ${fmt(syncBack.before, 0)} ms before, back in the band (${fmt(syncBack.band, 0)} ms) ${fmt(syncBack.back / 1000)} s after the restart began.`);
  out(`- Syncs in the first ${COLD_MS / 1000} s after it answered again (cold caches): ${cold.length}, p50 ${fmt(quantile(cold, 0.5), 0)} ms, p95 ${fmt(quantile(cold, 0.95), 0)} ms, max ${fmt(Math.max(...cold), 0)} ms; before the restart (warm): ${warm.length}, p50 ${fmt(quantile(warm, 0.5), 0)} ms, p95 ${fmt(quantile(warm, 0.95), 0)} ms.\n`);
  out('| seconds | requests | failed | p50 ms | p95 ms | syncs | sync p95 ms |');
  out('|---|---|---|---|---|---|---|');
  const syncWindows = windows(syncs, 0, end, 5000);
  windows(all, 0, end, 5000).forEach((w, i) => out(`| ${w.start / 1000}–${w.start / 1000 + 5} | ${w.count} | ${w.errors} | ${fmt(w.p50, 0)} | ${fmt(w.p95, 0)} | ${syncWindows[i]?.count ?? 0} | ${fmt(syncWindows[i]?.p95 ?? NaN, 0)} |`));
  out();
  return { errors, back: back.back, cold, warm, sentBefore: all.filter((s) => s.at < timing.restartAt).length };
}

/** A restart of one instance on `engine`: SIGTERM, then started again on the same port, database and DATA_DIR. */
async function singleRestart(engine: string, instance: Instance, target: Target, postgres: PostgresCpu | undefined): Promise<void> {
  let before = 0;
  let serverMs = 0;
  let pgMs = NaN;
  const lookups: Promise<{ hit: number; miss: number }>[] = [];
  let coldLookups: Promise<{ hit: number; miss: number }> = Promise.resolve({ hit: 0, miss: 0 });
  // CPU per request from the run's start to the restart: the warm instance's cost, without its start's.
  const r = await underLoad(
    `${engine}, one instance restarted`,
    target,
    async (timeline) => {
      serverMs = cpuMs(instance.pid) - before;
      pgMs = (await postgres?.total()) ?? NaN;
      lookups.push(Promise.resolve(await cacheLookups(target.client)));
      const restartAt = timeline.now();
      const drained = await instance.stop();
      const started = await instance.start();
      coldLookups = new Promise((resolve) => setTimeout(resolve, COLD_MS)).then(() => cacheLookups(target.client));
      return { restartAt, readyAt: timeline.now(), detail: `The drain (SIGTERM to exit) took ${fmt(drained, 0)} ms, the start (spawn to /api/alive answering) ${fmt(started, 0)} ms.` };
    },
    async () => {
      before = cpuMs(instance.pid);
      lookups.push(Promise.resolve(await cacheLookups(target.client)));
      await postgres?.start();
    },
  );
  const requests = Math.max(1, r.sentBefore);
  const [atStart, atRestart] = await Promise.all(lookups);
  out(`CPU before the restart: the server ${fmt(serverMs / requests, 2)} ms per model request${postgres ? `, PostgreSQL's backends ${fmt(pgMs / requests, 2)} ms` : ''} (${requests} requests; load average ${load()}).`);
  out(`Sync cache hits (its /metrics): ${hitRate(atStart!, atRestart!)} syncs before the restart, ${hitRate({ hit: 0, miss: 0 }, await coldLookups)} in the first ${COLD_MS / 1000} s after it.\n`);
  row({ what: `${engine}, one instance restarted under the rates of ${people(RATE_PEOPLE)} people: requests failed`, strongroom: r.errors, unit: 'requests', better: 'lower' });
  row({ what: `${engine}, one instance restarted: p95 back in its band after`, strongroom: r.back / 1000, unit: 's', better: 'lower' });
  row({ what: `${engine}, syncs in the first 10 s after a restart (cold), p95 (warm: ${fmt(quantile(r.warm, 0.95), 0)} ms)`, strongroom: quantile(r.cold, 0.95), unit: 'ms', better: 'lower' });
}

/** A Redis of the bench's own, so that its CPU is the fleet's alone. */
async function startRedis(): Promise<{ url: string; pid: number | undefined; stop(): void }> {
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  const { Redis } = await import('ioredis');
  const probe = new Redis(`redis://127.0.0.1:${port}`, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => 100 });
  for (let i = 0; i < 50; i++) {
    if ((await probe.ping().catch(() => '')) === 'PONG') break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  probe.disconnect();
  return { url: `redis://127.0.0.1:${port}`, pid: proc.pid, stop: () => proc.kill('SIGTERM') };
}

function cpuTable(label: string, s: StepResult): void {
  const p = s.perRequest;
  const app = p.instances.reduce((a, b) => a + b, 0);
  out(`| ${label} | ${people(s.people)} | ${fmt(s.requests / s.seconds)} | ${fmt(app, 2)} | ${fmt(p.postgres, 2)} | ${fmt(p.nginx, 2)} | ${fmt(p.redis, 3)} | ${fmt(p.generator, 2)} | ${fmt(p.others, 2)} | ${fmt(s.machineBusy * 100, 0)} % | ${fmt(s.syncP95, 0)} | ${fmt(s.writeP95, 0)} | ${s.errors} | ${load()} |`);
}

async function fleetScenario(databaseUrl: string, population: Population, tls: TestTls, secretsKey: string, postgres: PostgresCpu): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sr-capacity-fleet-'));
  const redis = await startRedis();
  const fleet = await startFleet({ databaseUrl, redisUrl: redis.url, dir, tls, instances: 2, freshSchema: false, cpus: ['0', '1'], env: { ...baseEnv(secretsKey), SHUTDOWN_TIMEOUT_SECONDS: '10' } });
  const client = createClient(fleet.url, tls.caPem, 128);
  const target: Target = { client, population, hubUrl: `${fleet.url.replace('https://', 'wss://')}/notifications/hub`, ca: tls.caPem };
  const nginxPid = () => Number(readFileSync(join(dir, 'nginx', 'nginx.pid'), 'utf8').trim()) || undefined;
  const processes: Processes = { instances: () => fleet.instances.map((i) => i.proc?.pid), nginx: nginxPid, redis: redis.pid, postgres };
  try {
    if (SCENARIOS.has('restart')) {
      const r = await underLoad('postgres, rolling restart of a fleet of 2 behind nginx', target, async (timeline) => {
        const restartAt = timeline.now();
        const each: string[] = [];
        for (const one of fleet.instances) {
          const t = timeline.now();
          await fleet.restart(one.index);
          each.push(fmt((timeline.now() - t) / 1000));
          await new Promise((resolve) => setTimeout(resolve, 2000));
        }
        return { restartAt, readyAt: timeline.now() - 2000, detail: `Each instance in turn out of nginx's rotation, SIGTERM, started again, back in (fleet.ts restart(): ${each.join(' s and ')} s), 2 s apart.` };
      });
      failures += r.errors;
      row({ what: `postgres, rolling restart of 2 instances behind nginx under the rates of ${people(RATE_PEOPLE)} people: requests failed`, strongroom: r.errors, unit: 'requests', better: 'lower', target: '0', met: r.errors === 0 });
      row({ what: 'postgres, rolling restart of 2 instances: p95 back in its band after the restart began', strongroom: r.back / 1000, unit: 's', better: 'lower' });
    }
    if (!SCENARIOS.has('fleet')) return;
    out(`**1 → 2 instances** (postgres; instance 0 pinned to core 0, instance 1 to core 1; PostgreSQL, nginx, Redis and the generator unpinned, sharing both cores; TLS ends at nginx; data of ${people(PEOPLE)} people; ${STEP_SECONDS} s per step, rates rising ${LADDER_FACTOR}x a step, one instance then two at each rate, a step that broke a limit played ${RETRIES + 1} times in all and held when one play held).\n`);
    const [one = [], two = []] = await ladders(
      target,
      processes,
      [
        { name: '1 instance', use: () => fleet.route([0]) },
        { name: '2 instances', use: () => fleet.route([0, 1]) },
      ],
      LADDER_FROM,
      LADDER_FACTOR,
      STEP_SECONDS,
      QUICK ? 2 : 14,
      log,
      RETRIES,
    );
    const oneHeld = held(one);
    const twoHeld = held(two);
    out('| setup | rates of people | requests/s | instances CPU ms/request | PostgreSQL ms/request | nginx ms/request | Redis ms/request | generator ms/request | other processes ms/request | machine busy | sync p95 ms | writes p95 ms | errors | load average after |');
    out('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const s of one) cpuTable('1 instance (core 0)', s);
    for (const s of two) cpuTable('2 instances (cores 0, 1)', s);
    out();
    if (!oneHeld) {
      out('One instance broke a limit at the first step: no prediction.\n');
      return;
    }
    // The model. At the largest rate one instance held, either its core or the machine as a whole
    // (both cores: the instance, PostgreSQL, nginx, Redis, the generator and whatever else runs)
    // was as busy as the limits allow. Two instances double the first: each core as busy as the one
    // was. The second stays: the stack's CPU per request, on two cores as busy as they were, less
    // what the rest of the machine took then.
    const p = oneHeld.perRequest;
    const app = p.instances[0]!;
    const stack = app + p.postgres + p.nginx + p.redis + p.generator;
    const perSecondAtOne = oneHeld.requests / oneHeld.seconds;
    const others = p.others * perSecondAtOne;
    const appBound = 2 * perSecondAtOne;
    const machineBound = (2000 * oneHeld.machineBusy - others) / stack;
    const idleBound = (2000 * oneHeld.machineBusy) / stack;
    const toPeople = (perSecond: number) => Math.round((perSecond / perSecondAtOne) * oneHeld.people / 100) * 100;
    const predicted = toPeople(Math.min(appBound, machineBound));
    out(`One instance held the rates of **${people(oneHeld.people)} people** (${fmt(perSecondAtOne)} requests/s) with its core ${fmt(oneHeld.busy[0]! * 100, 0)} % busy and the machine ${fmt(oneHeld.machineBusy * 100, 0)} % (other processes ${fmt(others / 10, 0)} % of one core): ${fmt(app, 2)} ms of the instance's CPU per request, ${fmt(stack, 2)} ms for the whole stack (PostgreSQL ${fmt(p.postgres, 2)}, nginx ${fmt(p.nginx, 2)}, Redis ${fmt(p.redis, 3)}, generator ${fmt(p.generator, 2)}).`);
    out(`Model: two instances, each core as busy as the one was: ${fmt(appBound, 1)} requests/s; the stack on two cores as busy as they were, beside the same other load: ${fmt(machineBound, 1)} requests/s (${fmt(idleBound, 1)} without the other load). The lower, **${people(predicted)} people**, is the prediction. Measured: **${twoHeld ? people(twoHeld.people) : 'none'}** (${twoHeld ? fmt(twoHeld.requests / twoHeld.seconds) : '–'} requests/s; ${two.at(-1)?.ok ? 'no step broke a limit' : `the next step, ${people(two.at(-1)!.people)}, broke a limit`}).\n`);
    row({ what: `postgres, people served by 1 instance pinned to 1 core (sync p95 < ${LIMITS.syncP95} ms, writes p95 < ${LIMITS.writeP95} ms, 0 errors; behind nginx)`, strongroom: oneHeld.people, unit: 'people', better: 'higher' });
    row({ what: `postgres, people served by 2 instances pinned to cores 0 and 1 (model predicted ${people(predicted)})`, strongroom: twoHeld?.people ?? 0, unit: 'people', better: 'higher' });
    row({ what: 'postgres, CPU per model request: instance', strongroom: app, unit: 'ms', better: 'lower' });
    row({ what: "postgres, CPU per model request: PostgreSQL's backends", strongroom: p.postgres, unit: 'ms', better: 'lower' });
  } finally {
    await client.close();
    await fleet.close();
    redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

buildServer();
const tls = await createTestTls();
const secretsKey = randomBytes(32).toString('base64');
out(`capacity-fleet: ${new Date().toISOString().slice(0, 16)} UTC, data of ${people(PEOPLE)} people, Node ${process.version}, load average ${load()} at the start.\n`);
for (const engine of ENGINES) {
  const database = await databaseFor(engine);
  const dataDir = mkdtempSync(join(tmpdir(), 'sr-capacity-data-'));
  const instance = await createInstance({
    env: { ...baseEnv(secretsKey), METRICS_ENABLED: 'true', METRICS_ALLOWED_ADDRESSES: '127.0.0.1', DATABASE_URL: database.url, DATA_DIR: dataDir, TLS_CERT_FILE: tls.certPath, TLS_KEY_FILE: tls.keyPath },
    ca: tls.caPem,
  });
  await instance.start();
  const client: Client = createClient(instance.url, tls.caPem, 128);
  const postgres = engine === 'postgres' ? new PostgresCpu(database.url) : undefined;
  await postgres?.open();
  try {
    const population = await seedPopulation(client, database.url, PEOPLE, log);
    out(`### ${engine}: ${people(PEOPLE)} people, ${population.items.toLocaleString('en-US')} items\n`);
    const target: Target = { client, population, hubUrl: `${instance.url.replace('https://', 'wss://')}/notifications/hub`, ca: tls.caPem };
    if (SCENARIOS.has('restart')) await singleRestart(engine, instance, target, postgres);
    await client.close();
    await instance.stop();
    if (engine === 'postgres' && postgres && (SCENARIOS.has('fleet') || SCENARIOS.has('restart'))) await fleetScenario(database.url, population, tls, secretsKey, postgres);
  } finally {
    await instance.stop();
    await postgres?.close();
    await database.drop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (QUICK && failures > 0) {
  console.error(`capacity-fleet (quick): ${failures} requests failed in the fleet's rolling restart`);
  process.exit(1);
}
