/**
 * Capacity benchmark (#43): docs/capacity.md's load model played against the server over HTTPS,
 * on SQLite and PostgreSQL in one run. For each engine: seed the population, hold its
 * notifications connections, measure each operation's server CPU alone, then play the busy hour
 * for the population and for multiples of its rates until a limit breaks (sync p95 250 ms, writes
 * p95 100 ms, no errors), and flood the password login to see it shed.
 *
 *   npm run bench -- capacity                          # 10,000 people, 60 s steps
 *   BENCH_PEOPLE=2000 BENCH_STEP_SECONDS=20 npm run bench -- capacity
 *   BENCH_QUICK=1 npx tsx bench/capacity.ts             # CI: a small population, short steps; fails on any error
 *
 * Options (environment): BENCH_PEOPLE (10000), BENCH_STEP_SECONDS (60), BENCH_MULTIPLES
 * (1,2,4,8,16,32,64: rates of that many times the population), BENCH_SCENARIOS
 * (held,cpu,steps,flood), BENCH_ENGINES, BENCH_POSTGRES_URL, BENCH_KEEP_DIR (a folder where the seeded
 * population is kept and used again by later runs: bench/capacity/saved.ts).
 */
import { writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { play, type PlayResult } from './capacity/arrivals.js';
import { createClient, Shed, type Client } from './capacity/client.js';
import { ownCpuMs } from './capacity/cpu.js';
import { BUSY_HOUR_PER_1000, HELD_CONNECTIONS_PER_PERSON, type OperationName } from './capacity/model.js';
import { modelArrivals } from './capacity/operations.js';
import { seedPopulation } from './capacity/population.js';
import { keptDatabase, loadPopulation, savePopulation } from './capacity/saved.js';
import { cpuMsOf, databaseFor, ENGINES, residentMbOf, startHttpsServer, summary } from './harness.js';
import { startClients } from './hub-clients.js';

const QUICK = process.env.BENCH_QUICK === '1';
const KEEP_DIR = process.env.BENCH_KEEP_DIR;
const PEOPLE = Number(process.env.BENCH_PEOPLE ?? (QUICK ? 60 : 10_000));
const STEP_SECONDS = Number(process.env.BENCH_STEP_SECONDS ?? (QUICK ? 4 : 60));
const MULTIPLES = (process.env.BENCH_MULTIPLES ?? (QUICK ? '100' : '1,2,4,8,16,32,64')).split(',').map(Number);
const SCENARIOS = new Set((process.env.BENCH_SCENARIOS ?? 'held,cpu,steps,flood').split(','));
const LIMITS = { syncP95: 250, writeP95: 100 };
const METRICS_TOKEN = 'capacity-bench-metrics-token';

/** The sync cache's hits and misses so far (/metrics), to say how much of a step's syncs it served. */
async function syncCacheLookups(client: Client): Promise<{ hit: number; miss: number }> {
  const text = await client.send<string>('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  const count = (result: string) => Number(new RegExp(`strongroom_sync_cache_lookups_total\\{result="${result}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
  return { hit: count('hit'), miss: count('miss') };
}

const log = (line: string) => console.error(`[capacity ${new Date().toISOString().slice(11, 19)}] ${line}`);
const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : '–');
const lines: string[] = [];
const out = (line = '') => {
  lines.push(line);
  console.log(line);
};
let failures = 0;

for (const engine of ENGINES) {
  const kept = KEEP_DIR ? await keptDatabase(KEEP_DIR, engine, PEOPLE, process.env.BENCH_POSTGRES_URL) : null;
  const database = kept ? { url: kept.url, drop: async () => undefined } : await databaseFor(engine);
  const server = await startHttpsServer(database.url, { PASSWORD_ITERATIONS: '600000', DEPLOYMENT: 'cloud', MAX_CONNECTIONS_PER_IP: '0', NOTIFICATIONS_MAX_CONNECTIONS_PER_IP: '1000000', METRICS_ENABLED: 'true', METRICS_TOKEN: METRICS_TOKEN });
  const caFile = join(tmpdir(), `sr-capacity-ca-${process.pid}.pem`);
  writeFileSync(caFile, server.ca);
  const client = createClient(server.url, server.ca, 128);
  const hubUrl = `${server.url.replace('https://', 'wss://')}/notifications/hub`;
  try {
    const population = kept?.exists ? await loadPopulation(kept.file, client, log) : await seedPopulation(client, database.url, PEOPLE, log);
    if (kept && !kept.exists) savePopulation(kept.file, population);
    out(`\n### ${engine}: ${PEOPLE.toLocaleString('en-US')} people, ${population.organizations.length} organizations, ${population.machines.length} machines, ${population.items.toLocaleString('en-US')} items\n`);

    // Held notifications connections, and what they cost the server's memory.
    const clients = SCENARIOS.has('held') ? await startClients({ NODE_EXTRA_CA_CERTS: caFile }) : null;
    if (clients) {
      const before = residentMbOf(server.pid);
      const wanted = Math.round(PEOPLE * HELD_CONNECTIONS_PER_PERSON);
      const tokens = Array.from({ length: wanted }, (_, i) => population.people[i % population.people.length]!.token);
      const held = await clients.connect(hubUrl, tokens, 1);
      await new Promise((resolve) => setTimeout(resolve, 3000));
      const after = residentMbOf(server.pid);
      // What keeping them costs with nothing else to do: the keep-alive pings both ways, the heartbeats.
      const idleSeconds = QUICK ? 2 : 20;
      const [serverIdle, clientsIdle] = [cpuMsOf(server.pid), cpuMsOf(clients.pid)];
      await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
      const keep = (cpuMsOf(server.pid) - serverIdle) / (idleSeconds * 10);
      const keepClients = (cpuMsOf(clients.pid) - clientsIdle) / (idleSeconds * 10);
      out(`Held notifications connections: ${held.ready} (${held.failed} failed); server resident memory ${fmt(before)} MB before, ${fmt(after)} MB after: ${fmt(((after - before) * 1024) / Math.max(1, held.ready), 1)} KB each. Keeping them open took ${fmt(keep)} % of a core on the server and ${fmt(keepClients)} % in the clients' process (over ${idleSeconds} s with no other load).\n`);
      if (held.failed > 0) failures++;
      summary('capacity', { what: `${engine}, resident memory with ${held.ready.toLocaleString('en-US')} notifications connections held`, strongroom: after, unit: 'MB', better: 'lower' });
    }

    // Each operation alone: the server's CPU per request.
    if (SCENARIOS.has('cpu')) {
      out('| operation | requests | server CPU ms per request | p50 ms | p95 ms | errors |');
      out('|---|---|---|---|---|---|');
      for (const name of Object.keys(BUSY_HOUR_PER_1000) as OperationName[]) {
        const rate = name === 'login' ? 2 : 20;
        const cpuBefore = cpuMsOf(server.pid);
        const result = await play(modelArrivals(client, population, { people: PEOPLE, only: [name], hubUrl, ca: server.ca }).map((a) => ({ ...a, rate: () => rate, spacing: 'even' as const })), QUICK ? 1 : 10);
        const f = result.recorder.figures()[0];
        const cpu = (cpuMsOf(server.pid) - cpuBefore) / Math.max(1, f?.count ?? 1);
        out(`| ${name} | ${f?.count ?? 0} | ${fmt(cpu, 2)} | ${fmt(f?.p50 ?? NaN)} | ${fmt(f?.p95 ?? NaN)} | ${f?.errors ?? 0} |`);
        failures += f?.errors ?? 0;
        problems(result);
      }
      out();
    }

    // The busy hour for the population, then for multiples of its rates until a limit breaks.
    if (SCENARIOS.has('steps')) {
      let served = 0;
      for (const multiple of MULTIPLES) {
        const people = PEOPLE * multiple;
        const cpuBefore = cpuMsOf(server.pid);
        const othersBefore = cpuMsOf(clients?.pid) + ownCpuMs();
        const cacheBefore = await syncCacheLookups(client);
        const result = await play(modelArrivals(client, population, { people, hubUrl, ca: server.ca }), STEP_SECONDS);
        const cacheAfter = await syncCacheLookups(client);
        const hits = cacheAfter.hit - cacheBefore.hit;
        const lookups = hits + cacheAfter.miss - cacheBefore.miss;
        const busy = (cpuMsOf(server.pid) - cpuBefore) / (STEP_SECONDS * 1000);
        const clientsBusy = (cpuMsOf(clients?.pid) + ownCpuMs() - othersBefore) / (STEP_SECONDS * 1000);
        const figures = result.recorder.figures();
        const of = (name: string) => figures.find((f) => f.name === name);
        const syncP95 = of('sync')?.p95 ?? NaN;
        const writeP95 = of('write')?.p95 ?? NaN;
        const errors = result.recorder.errors;
        const ok = errors === 0 && !(syncP95 >= LIMITS.syncP95) && !(writeP95 >= LIMITS.writeP95);
        if (ok) served = people;
        const total = figures.reduce((n, f) => n + f.count, 0);
        out(`**Rates of ${people.toLocaleString('en-US')} people** (${multiple}x the seeded population): ${total} requests in ${STEP_SECONDS} s (${fmt(total / STEP_SECONDS)} a second), server CPU ${fmt(busy * 100, 0)} % of one core (the generator and the held connections' clients ${fmt(clientsBusy * 100, 0)} %, load average ${fmt(loadavg()[0] ?? NaN)}), generator lag at worst ${fmt(result.worstLag, 0)} ms, syncs served from the sync cache ${fmt((100 * hits) / Math.max(1, lookups), 0)} %; ${ok ? 'within the limits' : '**past the limits**'}.\n`);
        out('| operation | requests | errors | shed | p50 ms | p95 ms | p99 ms | max ms |');
        out('|---|---|---|---|---|---|---|---|');
        for (const f of figures) out(`| ${f.name} | ${f.count} | ${f.errors} | ${f.shed} | ${fmt(f.p50)} | ${fmt(f.p95)} | ${fmt(f.p99)} | ${fmt(f.max)} |`);
        out();
        problems(result);
        if (multiple === MULTIPLES[0] && errors > 0) failures += errors;
        if (!ok) break;
      }
      out(`**${engine}: the rates of ${served.toLocaleString('en-US')} people** held with sync p95 under ${LIMITS.syncP95} ms, writes p95 under ${LIMITS.writeP95} ms and no errors (data of ${PEOPLE.toLocaleString('en-US')} people).\n`);
      summary('capacity', {
        what: `${engine}, people served (busy hour; sync p95 < ${LIMITS.syncP95} ms, writes p95 < ${LIMITS.writeP95} ms, 0 errors; data of ${PEOPLE.toLocaleString('en-US')} people)`,
        strongroom: served,
        unit: 'people',
        better: 'higher',
        target: '≥ 10,000',
        met: served >= 10_000,
      });
    }

    // Many password logins at once: the hash queue sheds what it cannot start soon.
    if (SCENARIOS.has('flood')) {
      const tries = QUICK ? 80 : 300;
      let ok = 0;
      let shed = 0;
      let errors = 0;
      const started = performance.now();
      await Promise.all(
        Array.from({ length: tries }, async (_, i) => {
          try {
            await client.send('POST', '/identity/connect/token', { form: population.fullCostLogins[i % population.fullCostLogins.length]!, mayShed: true });
            ok++;
          } catch (error) {
            if (error instanceof Shed) shed++;
            else {
              errors++;
              if (errors <= 3) log(`flood: ${(error as Error).message}`);
            }
          }
        }),
      );
      failures += errors;
      out(`Password login flood: ${tries} at once, ${ok} answered with tokens, ${shed} shed with 429 and Retry-After, ${errors} errors, all answered in ${fmt((performance.now() - started) / 1000)} s.\n`);
    }
    await clients?.stop();
  } finally {
    await client.close();
    await server.stop();
    await database.drop();
  }
}

function problems(result: PlayResult): void {
  for (const [problem, count] of result.recorder.problems) log(`error ×${count}: ${problem}`);
}

if (QUICK && failures > 0) {
  console.error(`capacity (quick): ${failures} errors`);
  process.exit(1);
}
