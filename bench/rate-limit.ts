/**
 * Rate-limit benchmark: the cost of the per-organization limit on a public-API list
 * (`GET /api/public/members` with an organization API-key token) against the same route with the
 * limit off, with the counters in the process and in Redis; then the two-instance exactness
 * figure: 200 concurrent requests for one organization spread over two servers sharing one
 * Redis and one database, and how many pass. SQLite only (the limit does not touch the
 * database). Not a test.
 *
 *   BENCH_REDIS_URL=redis://127.0.0.1:56391 npx tsx bench/rate-limit.ts
 *
 * Options (environment): BENCH_SECONDS (10), BENCH_REDIS_URL (the Redis parts are skipped
 * without it), BENCH_PUBLIC_PATH (/api/public/members), BENCH_ROUNDS (5, exactness rounds),
 * BENCH_REPEATS (3: each overhead run is repeated, interleaved, and the median kept).
 * The server is src/main.ts, with the real `GET /api/public/members`.
 */
import { readFileSync } from 'node:fs';
import { Redis } from 'ioredis';
import { createMemoryStore, createRedisStore, REDIS_KEY_PREFIX } from '../src/features/rate-limits/limit-store.js';
import { call, foundOrganization, CLIENT_HEADERS, databaseFor, measure, Results, SECONDS, startServer, type Figures, type Running } from './harness.js';

const REDIS_URL = process.env.BENCH_REDIS_URL;
const PATH = process.env.BENCH_PUBLIC_PATH ?? '/api/public/members';
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const REPEATS = Number(process.env.BENCH_REPEATS ?? 3);
const CONNECTIONS = [1, 10];
/** High enough that no request of a run is refused: the cost of the check, not of refusals. */
const NEVER_REFUSED = { PUBLIC_API_RATE_LIMIT: '100000', PUBLIC_API_BURST: '100000' };
/** With Redis: a slow answer is a 503 (counted in "other"), never the in-process fallback, so every figure is Redis's. */
const REDIS_ONLY = { RATE_LIMIT_REDIS_FAILURE: 'closed', RATE_LIMIT_REDIS_TIMEOUT_MS: '10000' };

const start = (url: string, env: Record<string, string>) => startServer(url, { DEPLOYMENT: 'cloud', ...env });

/** An owner founds an organization with its 20 invited members and fetches its API key; answers an organization token. */
async function seed(base: string): Promise<{ orgId: string; clientSecret: string }> {
  const { orgId, token, account } = await foundOrganization(base, 'limit-bench@example.com');
  const emails = Array.from({ length: 20 }, (_, i) => `member${i}@bench.test`);
  await call(base, 'POST', `/api/organizations/${orgId}/users/invite`, { token, json: { emails, type: 2, accessAll: false, collections: [] } });
  const key = JSON.parse(await call(base, 'POST', `/api/organizations/${orgId}/api-key`, { token, json: { masterPasswordHash: account.masterPasswordHash } })) as {
    apiKey: string;
  };
  return { orgId, clientSecret: key.apiKey };
}

async function organizationToken(base: string, orgId: string, clientSecret: string): Promise<string> {
  const form = { grant_type: 'client_credentials', scope: 'api.organization', client_id: `organization.${orgId}`, client_secret: clientSecret };
  return (JSON.parse(await call(base, 'POST', '/identity/connect/token', { form })) as { access_token: string }).access_token;
}

/** CPU seconds (user + system) a process has used, from /proc (Linux). */
function processCpuSeconds(pid: number | undefined): number {
  if (!pid) return 0;
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

async function redisCpuSeconds(redis: Redis | undefined): Promise<number> {
  if (!redis) return 0;
  const info = await redis.info('cpu');
  const value = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
  return value('used_cpu_sys') + value('used_cpu_user');
}

const results = new Results();
const overhead: string[] = [];
const cpuRows: string[] = [];

/** 200 requests at once, alternating between the two servers; answers how many passed and how long the burst took. */
async function burst(servers: Running[], token: string): Promise<{ passed: number; refused: number; other: number; ms: number }> {
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: 200 }, async (_, i) => {
      const res = await fetch((servers[i % servers.length] as Running).url + PATH, { headers: { ...CLIENT_HEADERS, authorization: `Bearer ${token}` } });
      await res.arrayBuffer();
      return res.status;
    }),
  );
  return {
    passed: statuses.filter((s) => s === 200).length,
    refused: statuses.filter((s) => s === 429).length,
    other: statuses.filter((s) => s !== 200 && s !== 429).length,
    ms: performance.now() - started,
  };
}

/** The limit check alone, without HTTP: microseconds per check in the process, and per check to Redis one at a time and 100 at once. */
async function checkCost(): Promise<string[]> {
  const lines: string[] = [];
  const bucket = (i: number) => [{ key: `bench:${i % 1000}`, intervalMs: 0.6, burst: 1_000_000 }];
  const memory = createMemoryStore({ maxKeys: 100_000 });
  let started = performance.now();
  for (let i = 0; i < 200_000; i++) await memory.consume(bucket(i), Date.now());
  lines.push(`in process: ${(((performance.now() - started) * 1000) / 200_000).toFixed(2)} µs per check`);
  if (REDIS_URL) {
    const client = new Redis(REDIS_URL, { enableAutoPipelining: true });
    const store = createRedisStore(client);
    for (let i = 0; i < 1000; i++) await store.consume(bucket(i), Date.now());
    started = performance.now();
    for (let i = 0; i < 5000; i++) await store.consume(bucket(i), Date.now());
    lines.push(`Redis, one at a time: ${(((performance.now() - started) * 1000) / 5000).toFixed(0)} µs per check (a round trip)`);
    started = performance.now();
    for (let round = 0; round < 100; round++) await Promise.all(Array.from({ length: 100 }, (_, i) => store.consume(bucket(i), Date.now())));
    lines.push(`Redis, 100 at once: ${(((performance.now() - started) * 1000) / 10_000).toFixed(1)} µs per check`);
    await client.del(...Array.from({ length: 1000 }, (_, i) => `${REDIS_KEY_PREFIX}bench:${i}`));
    client.disconnect();
  }
  return lines;
}

async function main(): Promise<void> {
  const costs = await checkCost();
  const database = await databaseFor('sqlite');
  const setup = await start(database.url, {});
  const { orgId, clientSecret } = await seed(setup.url);
  const token = await organizationToken(setup.url, orgId, clientSecret);
  const body = await call(setup.url, 'GET', PATH, { token });
  console.error(`${PATH}: ${body.length.toLocaleString('en-US')} bytes`);
  await setup.stop();

  const modes: [string, Record<string, string>][] = [
    ['limit off', { PUBLIC_API_RATE_LIMIT: '0' }],
    ['limit on, in process', NEVER_REFUSED],
    ...(REDIS_URL ? ([['limit on, in Redis', { ...NEVER_REFUSED, ...REDIS_ONLY, REDIS_URL }]] as [string, Record<string, string>][]) : []),
  ];
  const redis = REDIS_URL ? new Redis(REDIS_URL) : undefined;
  // The machine is shared: each mode runs REPEATS times, interleaved with the others, and the
  // run with the median throughput stands for it.
  const runs = new Map<string, Figures[]>();
  const cpu = new Map<string, number[]>();
  for (let repeat = 0; repeat < REPEATS; repeat++) {
    for (const [what, env] of modes) {
      await redis?.del(`strongroom:limit:org:${orgId}`);
      const server = await start(database.url, env);
      const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}` };
      await measure({ url: server.url + PATH, connections: 10, duration: 2, headers });
      for (const connections of CONNECTIONS) {
        // CPU per request (the server's, plus Redis's when it holds the counters) does not depend
        // on what else the machine is running, unlike latency and throughput.
        const withRedis = Boolean(env.REDIS_URL);
        const before = processCpuSeconds(server.pid) + (withRedis ? await redisCpuSeconds(redis) : 0);
        const figures = await measure({ url: server.url + PATH, connections, headers });
        const after = processCpuSeconds(server.pid) + (withRedis ? await redisCpuSeconds(redis) : 0);
        runs.set(`${what}|${connections}`, [...(runs.get(`${what}|${connections}`) ?? []), figures]);
        cpu.set(`${what}|${connections}`, [...(cpu.get(`${what}|${connections}`) ?? []), ((after - before) / (figures.rps * SECONDS)) * 1e6]);
      }
      await server.stop();
    }
  }
  const median = (what: string, connections: number): Figures => {
    const sorted = [...(runs.get(`${what}|${connections}`) ?? [])].sort((a, b) => a.rps - b.rps);
    return sorted[Math.floor(sorted.length / 2)] as Figures;
  };
  const medianCpu = (what: string, connections: number): number => {
    const sorted = [...(cpu.get(`${what}|${connections}`) ?? [])].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  };
  for (const connections of CONNECTIONS) {
    const offCpu = medianCpu('limit off', connections);
    for (const [what] of modes) {
      results.row('sqlite', what, connections, median(what, connections));
      const own = medianCpu(what, connections);
      cpuRows.push(`| ${what} | ${connections} | ${own.toFixed(0)} | ${what === 'limit off' ? '' : `${(((own - offCpu) / offCpu) * 100).toFixed(1)} %`} |`);
    }
    const off = median('limit off', connections);
    for (const [what] of modes.slice(1)) {
      const on = median(what, connections);
      overhead.push(
        `${connections} connection(s), ${what}: mean latency ${(((on.mean - off.mean) / off.mean) * 100).toFixed(1)} % higher, throughput ${(((off.rps - on.rps) / off.rps) * 100).toFixed(1)} % lower`,
      );
    }
  }

  const exactness: string[] = [];
  if (REDIS_URL && redis) {
    for (const [label, env, expected] of [
      ['defaults (100 a minute, burst 20)', { REDIS_URL, ...REDIS_ONLY }, (ms: number) => `at most ${20 + Math.floor(ms / 600)}`],
      ['1 a minute, burst 20 (no refill during the burst)', { REDIS_URL, ...REDIS_ONLY, PUBLIC_API_RATE_LIMIT: '1' }, () => 'exactly 20'],
      ['1 a minute, burst 20, without Redis (each instance alone)', { PUBLIC_API_RATE_LIMIT: '1' }, () => '20 per instance'],
    ] as [string, Record<string, string>, (ms: number) => string][]) {
      const servers = [await start(database.url, env), await start(database.url, env)];
      for (let round = 0; round < ROUNDS; round++) {
        await redis.del(`strongroom:limit:org:${orgId}`);
        // Without Redis the buckets live in the two processes, so only one round is meaningful.
        const result = await burst(servers, token);
        exactness.push(
          `| ${label} | ${round + 1} | ${result.passed} | ${result.refused} | ${result.other} | ${result.ms.toFixed(0)} | ${expected(result.ms)} |`,
        );
        if (!env.REDIS_URL) break;
      }
      for (const server of servers) await server.stop();
    }
  }
  redis?.disconnect();
  await database.drop();

  results.print(`Rate limit on ${PATH} (organization token), SQLite, median of ${REPEATS} interleaved runs`, 'Cost of the limit against the same route with it off:');
  for (const line of overhead) console.log(`- ${line}`);
  console.log(`\nCPU per request (median of ${REPEATS}): the server process, plus the Redis server for "in Redis":\n`);
  console.log('| what | connections | CPU µs per request | against limit off |');
  console.log('|---|---|---|---|');
  for (const line of cpuRows) console.log(line);
  console.log(`\nThe check alone (no HTTP):\n`);
  for (const line of costs) console.log(`- ${line}`);
  if (exactness.length > 0) {
    console.log(`\nTwo instances sharing one Redis and one database, 200 concurrent requests for one organization:\n`);
    console.log('| settings | round | passed | 429 | other | ms | the bucket allows |');
    console.log('|---|---|---|---|---|---|---|');
    for (const line of exactness) console.log(line);
  }
  console.log(`\n${SECONDS} s per run, Node ${process.version}`);
}

await main();
