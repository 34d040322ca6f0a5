/**
 * A lean process (issue #19): cold start to the first answer, idle memory (over HTTP, and over
 * HTTPS from certificate files, issue #43), memory after many syncs, and the latency of other
 * requests while logins hash passwords. The server runs as
 * `npm start` runs it (`node <the start script's flags> dist/main.js`, built first) on SQLite,
 * every service in one process; the ceiling is a bare Fastify server with one route, started
 * and measured the same way in the same run. Not a test: it measures and prints.
 *
 *   npx tsx bench/lean.ts
 *
 * Options (environment): BENCH_STARTS (7 starts each), BENCH_SYNC_ITEMS (10000), BENCH_SYNCS
 * (10000), BENCH_FAIR_ITEMS (1000), BENCH_LOGINS (20 in flight), BENCH_SECONDS (10),
 * BENCH_SETTLE_SECONDS (10, the wait before the syncs scenario's idle reading; the memory scenario reads 3 and 30 s after each first answer), BENCH_SCENARIOS (start,memory,syncs,fairness,imports),
 * BENCH_HASHING_CONCURRENCY (the server's PASSWORD_HASHING_CONCURRENCY; its default unless set),
 * BENCH_CACHE_IDLE_MINUTES (the server's CACHE_IDLE_MINUTES; its default unless set).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { get } from 'node:http';
import { get as getHttps } from 'node:https';
import { join } from 'node:path';
import { passwordGrantForm } from '../test/support/accounts.js';
import { makeTestAccount, registerFinishBody } from '../test/support/bw-crypto.js';
import { loadConfig } from '../src/config/config.js';
import { itemBody } from './items.js';
import { OPTIONAL_PACKAGES } from '../test/support/lazy-packages.js';
import { createTestTls } from '../test/support/tls.js';
import { call, CLIENT_HEADERS, cpuMsOf, databaseFor, freePort, measure, registerAndLogin, residentMbOf, ROOT, SECONDS, summary, type Figures } from './harness.js';

const STARTS = Number(process.env.BENCH_STARTS ?? 7);
const SYNC_ITEMS = Number(process.env.BENCH_SYNC_ITEMS ?? 10_000);
const SYNCS = Number(process.env.BENCH_SYNCS ?? 10_000);
const FAIR_ITEMS = Number(process.env.BENCH_FAIR_ITEMS ?? 1_000);
const LOGINS = Number(process.env.BENCH_LOGINS ?? 20);
const SETTLE_MS = Number(process.env.BENCH_SETTLE_SECONDS ?? 10) * 1000;
const SCENARIOS = (process.env.BENCH_SCENARIOS ?? 'start,memory,syncs,fairness,imports').split(',');
/** The server's default, or BENCH_CACHE_IDLE_MINUTES: the syncs scenario waits for the caches to give back what no sync uses. */
const CACHE_IDLE_MINUTES = Number(process.env.BENCH_CACHE_IDLE_MINUTES ?? loadConfig({}).cacheIdleMinutes);

/** The environment and node flags of `npm start` (package.json's start script), so that the bench runs what operators run. */
const START_WORDS = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: { start: string } }).scripts.start.split(/\s+/);
const START_FLAGS = START_WORDS.filter((word) => word.startsWith('--'));
const START_ENV: Record<string, string> = Object.fromEntries(
  START_WORDS.slice(0, Math.max(0, START_WORDS.indexOf('node')))
    .filter((word) => /^[A-Za-z_][A-Za-z0-9_]*=/.test(word))
    .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
);

const START_COMMAND = [...Object.entries(START_ENV).map(([name, value]) => `${name}=${value}`), 'node', ...START_FLAGS, 'dist/main.js'].join(' ');

/** The ceiling: Fastify answering the same liveness route, nothing else (over HTTPS with the same settings Strongroom reads). */
const BARE_SERVER = `
import Fastify from 'fastify';
import { readFileSync } from 'node:fs';
const tls = process.env.TLS_CERT_FILE && { cert: readFileSync(process.env.TLS_CERT_FILE), key: readFileSync(process.env.TLS_KEY_FILE) };
const app = Fastify(tls ? { https: tls } : {});
app.get('/api/alive', async () => new Date().toISOString());
await app.listen({ host: '127.0.0.1', port: Number(process.env.PORT) });
`;

interface Process {
  url: string;
  pid: number;
  /** Milliseconds from spawning to the first 200 of GET /api/alive. */
  startMs: number;
  /** CPU time (user and system, every thread) the process had spent by then: what a busy machine does not inflate. */
  cpuMs: number;
  /** performance.now() at the first answer. */
  answeredAt: number;
  stop(): Promise<void>;
}

// Over HTTPS the bench's own test CA signed the certificate: it is not checked, only the answer.
const ok = (url: string) =>
  new Promise<boolean>((resolve) => {
    const answered = (res: { statusCode?: number; resume(): void }) => {
      res.resume();
      resolve(res.statusCode === 200);
    };
    (url.startsWith('https:') ? getHttps(url, { rejectUnauthorized: false }, answered) : get(url, answered)).on('error', () => resolve(false));
  });

async function launch(args: string[], env: Record<string, string>): Promise<Process> {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { PATH: process.env.PATH, PORT: String(port), ...START_ENV, ...env }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const url = `${env.TLS_CERT_FILE ? 'https' : 'http'}://127.0.0.1:${port}`;
  while (!(await ok(`${url}/api/alive`))) {
    if (child.exitCode !== null) throw new Error(`${args.join(' ')} exited with ${child.exitCode}: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const answeredAt = performance.now();
  return { url, pid: child.pid ?? 0, startMs: answeredAt - started, cpuMs: cpuMsOf(child.pid ?? 0), answeredAt, stop: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

/** Strongroom as `npm start` runs it, on `databaseUrl`, with every service. */
const strongroom = (databaseUrl: string, env: Record<string, string> = {}) =>
  launch([...START_FLAGS, 'dist/main.js'], {
    DATABASE_URL: databaseUrl,
    PUBLIC_URL: 'http://vault.bench.test',
    LOG_LEVEL: 'warn',
    IP_RATE_LIMITING: 'false',
    ...env,
  });
const bare = (env: Record<string, string> = {}) => launch([...START_FLAGS, '--input-type=module', '--eval', BARE_SERVER], env);

const settle = (ms = SETTLE_MS) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Resident memory once it has stopped falling after a burst: V8 gives back the heap it grew only
 * when its memory reducer runs, 20 to 60 s after allocation stops (seen on this machine), so one
 * reading after a short wait measures garbage not yet collected. Read every 5 s for at least
 * 60 s, then until three readings in a row are within 1 MB of each other, or 120 s have passed.
 */
async function settledRss(pid: number): Promise<{ after: number; waitedS: number }> {
  const readings = [residentMbOf(pid)];
  while (readings.length * 5 < 120) {
    await settle(5000);
    readings.push(residentMbOf(pid));
    const last = readings.slice(-3);
    if (readings.length * 5 > 60 && Math.max(...last) - Math.min(...last) < 1) break;
  }
  return { after: readings.at(-1)!, waitedS: (readings.length - 1) * 5 };
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const lines: string[] = [];
const say = (line: string) => {
  lines.push(line);
  console.error(line);
};

/** Cold start: spawn to the first 200, on a database already made (and once on a new one). */
async function startScenario() {
  const database = await databaseFor('sqlite');
  try {
    const first = await strongroom(database.url);
    await first.stop();
    const ours: number[] = [];
    const ceiling: number[] = [];
    const oursCpu: number[] = [];
    const ceilingCpu: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      // Alternated, so that both see the same machine.
      const a = await strongroom(database.url);
      ours.push(a.startMs);
      oursCpu.push(a.cpuMs);
      await a.stop();
      const b = await bare();
      ceiling.push(b.startMs);
      ceilingCpu.push(b.cpuMs);
      await b.stop();
    }
    say(`| cold start to the first answer, new database (migrations, signing key) | ${first.startMs.toFixed(0)} ms | | |`);
    say(`| cold start to the first answer, median of ${STARTS} | ${median(ours).toFixed(0)} ms | ${median(ceiling).toFixed(0)} ms | ${(median(ours) / median(ceiling)).toFixed(2)}x |`);
    say(`| (all starts, ms) | ${ours.map((ms) => ms.toFixed(0)).join(', ')} | ${ceiling.map((ms) => ms.toFixed(0)).join(', ')} | |`);
    say(`| CPU time spent by the first answer, median of ${STARTS} | ${median(oursCpu).toFixed(0)} ms | ${median(ceilingCpu).toFixed(0)} ms | ${(median(oursCpu) / median(ceilingCpu)).toFixed(2)}x |`);
    summary('lean', { what: 'cold start to the first answer (SQLite, existing database, median)', strongroom: median(ours), ceiling: median(ceiling), unit: 'ms', better: 'lower', target: '< 1000 ms', met: median(ours) < 1000 });
    summary('lean', { what: 'CPU time spent by the first answer (median; a busy machine inflates the wall time above, not this)', strongroom: median(oursCpu), ceiling: median(ceilingCpu), unit: 'ms', better: 'lower' });
    summary('lean', { what: 'first start on a new database (migrations, signing key)', strongroom: first.startMs, unit: 'ms', better: 'lower' });
  } finally {
    await database.drop();
  }
}

/**
 * When the idle rows read resident memory, in seconds after each process's first answer: 3 s is
 * issue #43's reading (`npm start`, then VmRSS three seconds after it answers), before V8's
 * memory reducer has run on Node 20; 30 s is usually after it (docs/benchmarks.md, the lean
 * section). Each process is read at its own times, so starting four one after the other skews
 * nothing.
 */
const IDLE_READS_S = [3, 30];

/** VmRSS of `proc` at each of IDLE_READS_S after its first answer. */
async function idleReadings(proc: Process): Promise<number[]> {
  const readings: number[] = [];
  for (const seconds of IDLE_READS_S) {
    await settle(Math.max(0, proc.answeredAt + seconds * 1000 - performance.now()));
    readings.push(residentMbOf(proc.pid));
  }
  return readings;
}

/**
 * Idle resident memory after one answer, Strongroom beside bare Fastify: over plain HTTP, and
 * over HTTPS from certificate files (TLS_MODE=files; issue #43), all four idle at once.
 */
async function memoryScenario() {
  const database = await databaseFor('sqlite');
  const tls = await createTestTls();
  const https = { TLS_CERT_FILE: tls.certPath, TLS_KEY_FILE: tls.keyPath };
  try {
    await (await strongroom(database.url)).stop();
    const ours = await strongroom(database.url);
    const ceiling = await bare();
    const oursHttps = await strongroom(database.url, { ...https, PUBLIC_URL: 'https://vault.bench.test' });
    const ceilingHttps = await bare(https);
    const [a, b, c, d] = await Promise.all([ours, ceiling, oursHttps, ceilingHttps].map(idleReadings));
    await Promise.all([ours.stop(), ceiling.stop(), oursHttps.stop(), ceilingHttps.stop()]);
    IDLE_READS_S.forEach((seconds, i) => {
      const when = `${seconds} s after the first answer`;
      const [ra, rb, rc, rd] = [a, b, c, d].map((readings) => readings?.[i] ?? Number.NaN) as [number, number, number, number];
      say(`| idle resident memory ${when} (every service, SQLite) | ${ra.toFixed(1)} MB | ${rb.toFixed(1)} MB | ${(ra / rb).toFixed(2)}x |`);
      say(`| idle resident memory ${when} with HTTPS (TLS_CERT_FILE and TLS_KEY_FILE; every service, SQLite), against bare Fastify over HTTPS | ${rc.toFixed(1)} MB | ${rd.toFixed(1)} MB | ${(rc / rd).toFixed(2)}x |`);
      summary('lean', { what: `idle resident memory ${when}, every service in one process (SQLite)`, strongroom: ra, ceiling: rb, unit: 'MB', better: 'lower', target: '< 80 MB', met: ra < 80 });
      summary('lean', { what: `idle resident memory ${when} with HTTPS from certificate files (TLS_MODE=files), every service (SQLite), against bare Fastify over HTTPS`, strongroom: rc, ceiling: rd, unit: 'MB', better: 'lower', target: '< 80 MB', met: rc < 80 });
    });
  } finally {
    await database.drop();
  }
}

/** Resident memory before, during (peak) and after SYNCS syncs of a SYNC_ITEMS-item vault. */
async function syncsScenario() {
  const database = await databaseFor('sqlite');
  // Said explicitly: the server would also read the project's .env, which the bench does not.
  const release = { CACHE_IDLE_MINUTES: String(CACHE_IDLE_MINUTES) };
  let server = await strongroom(database.url, release);
  try {
    const { token, account } = await registerAndLogin(server.url, 'syncs@example.com');
    for (let start = 0; start < SYNC_ITEMS; start += 5000) {
      const ciphers = Array.from({ length: Math.min(5000, SYNC_ITEMS - start) }, (_, i) => itemBody(account, start + i));
      await call(server.url, 'POST', '/api/ciphers/import', { token, json: { folders: [], ciphers, folderRelationships: [] } });
    }
    await server.stop();
    server = await strongroom(database.url, release);
    await settle();
    const idle = residentMbOf(server.pid);
    let peak = idle;
    const sampler = setInterval(() => (peak = Math.max(peak, residentMbOf(server.pid))), 100);
    const syncs = await measure({ url: `${server.url}/api/sync?excludeDomains=true`, headers: { ...CLIENT_HEADERS, authorization: `Bearer ${token}` }, connections: 4, amount: SYNCS });
    clearInterval(sampler);
    const lastSync = performance.now();
    const { after, waitedS } = await settledRss(server.pid);
    const sectionMb = syncs.bytes / 1024 / 1024;
    say(
      `| ${SYNCS.toLocaleString('en-US')} syncs of a ${SYNC_ITEMS.toLocaleString('en-US')}-item vault (4 connections, ${syncs.bytes.toLocaleString('en-US')} bytes each, ${syncs.errors} errors): resident memory idle → peak → after (settled ${waitedS} s after the last sync) | ${idle.toFixed(1)} → ${peak.toFixed(1)} → ${after.toFixed(1)} MB | | after / idle ${(after / idle).toFixed(2)}x |`,
    );
    say(`| of which the cached vault section (about one answer's bytes, bounded by SYNC_CACHE_MEGABYTES): after less the section, against idle | ${(after - sectionMb).toFixed(1)} MB | ${idle.toFixed(1)} MB | ${((after - sectionMb) / idle).toFixed(2)}x |`);
    // The caches give back what no request used for CACHE_IDLE_MINUTES (its default here), within twice that.
    const releasedBy = lastSync + (2 * CACHE_IDLE_MINUTES + 0.5) * 60_000;
    await settle(Math.max(0, releasedBy - performance.now()));
    const released = residentMbOf(server.pid);
    const releasedS = Math.round((performance.now() - lastSync) / 1000);
    say(`| the same process ${releasedS} s after the last sync, once the caches gave back what no sync used for ${CACHE_IDLE_MINUTES} minutes (CACHE_IDLE_MINUTES) | ${released.toFixed(1)} MB | ${idle.toFixed(1)} MB | ${(released / idle).toFixed(2)}x |`);
    summary('lean', {
      what: `resident memory after ${SYNCS.toLocaleString('en-US')} syncs of a ${SYNC_ITEMS.toLocaleString('en-US')}-item vault, ${releasedS} s after the last (the caches' idle release), against the same process idle before`,
      strongroom: released,
      ceiling: idle,
      unit: 'MB',
      better: 'lower',
      target: 'within 20 % of idle (≤ 1.20x)',
      met: released <= idle * 1.2,
    });
    summary('lean', {
      what: `resident memory after ${SYNCS.toLocaleString('en-US')} syncs of a ${SYNC_ITEMS.toLocaleString('en-US')}-item vault, settled ${waitedS} s after the last (the section still cached), against the same process idle before`,
      strongroom: after,
      ceiling: idle,
      unit: 'MB',
      better: 'lower',
    });
  } finally {
    await server.stop();
    await database.drop();
  }
}

/** p99 of sync (FAIR_ITEMS items) and item reads, without and then with LOGINS logins in flight (600,000 iterations). */
async function fairnessScenario() {
  const database = await databaseFor('sqlite');
  const hashing = process.env.BENCH_HASHING_CONCURRENCY;
  const server = await strongroom(database.url, { PASSWORD_ITERATIONS: '600000', ...(hashing ? { PASSWORD_HASHING_CONCURRENCY: hashing } : {}) });
  try {
    const { token, account } = await registerAndLogin(server.url, 'reader@example.com');
    const ciphers = Array.from({ length: FAIR_ITEMS }, (_, i) => itemBody(account, i));
    await call(server.url, 'POST', '/api/ciphers/import', { token, json: { folders: [], ciphers, folderRelationships: [] } });
    const ids = (JSON.parse(await call(server.url, 'GET', '/api/ciphers', { token })) as { data: { id: string }[] }).data.map((c) => c.id);
    const forms: string[] = [];
    for (let i = 0; i < LOGINS; i++) {
      const user = makeTestAccount({ email: `login${i}@example.com` });
      await call(server.url, 'POST', '/identity/accounts/register/finish', { json: registerFinishBody(user) });
      forms.push(new URLSearchParams(passwordGrantForm(user, { deviceType: '25', deviceIdentifier: `b0b0b0b0-0000-4000-8000-${String(i).padStart(12, '0')}`, deviceName: 'bench' })).toString());
    }
    const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}` };
    let next = 0;
    const others = () =>
      Promise.all([
        measure({ url: `${server.url}/api/sync?excludeDomains=true`, headers, connections: 2 }),
        measure({ url: server.url, headers, connections: 2, requests: [{ method: 'GET', setupRequest: (request) => ({ ...request, path: `/api/ciphers/${ids[next++ % ids.length] ?? ''}` }) }] }),
      ]);
    const [syncAlone, readAlone] = await others();
    let login = 0;
    const logins = measure({
      url: `${server.url}/identity/connect/token`,
      connections: LOGINS,
      duration: SECONDS + 4,
      timeout: 60,
      requests: [
        {
          method: 'POST',
          headers: { ...CLIENT_HEADERS, 'content-type': 'application/x-www-form-urlencoded' },
          setupRequest: (request) => ({ ...request, body: forms[login++ % forms.length] ?? '' }),
        },
      ],
    });
    // The queue fills first: every login connection has a request in flight.
    await settle(2000);
    const [syncLoaded, readLoaded] = await others();
    const loginFigures = await logins;
    const row = (what: string, alone: Figures, loaded: Figures) => {
      say(`| p99 of ${what}, ${LOGINS} logins in flight against none (mean ${loaded.mean.toFixed(1)} against ${alone.mean.toFixed(1)} ms, ${loaded.errors} errors) | ${loaded.p99} ms | ${alone.p99} ms | ${(loaded.p99 / Math.max(alone.p99, 1)).toFixed(2)}x |`);
      summary('lean', { what: `p99 of ${what} with ${LOGINS} logins in flight (600,000 iterations), against without`, strongroom: loaded.p99, ceiling: alone.p99, unit: 'ms', better: 'lower', target: '< 50 ms', met: loaded.p99 < 50 });
    };
    row(`sync of a ${FAIR_ITEMS.toLocaleString('en-US')}-item vault (2 connections)`, syncAlone, syncLoaded);
    row('item reads (2 connections)', readAlone, readLoaded);
    say(`| logins meanwhile (${LOGINS} connections): answered per second, p50, p99, errors | ${loginFigures.rps.toFixed(1)}/s, ${loginFigures.p50} ms, ${loginFigures.p99} ms, ${loginFigures.errors} | | |`);
    summary('lean', { what: `logins per second with ${LOGINS} in flight (600,000 iterations)`, strongroom: loginFigures.rps, unit: 'logins/s', better: 'higher' });
  } finally {
    await server.stop();
    await database.drop();
  }
}

/** What importing a package costs a fresh process, after garbage collection: resident memory, JS heap, time. */
const IMPORT_COST = `
const settled = () => { globalThis.gc(); globalThis.gc(); return process.memoryUsage(); };
const before = settled();
const started = performance.now();
await import(process.argv[1]);
const ms = performance.now() - started;
const after = settled();
console.log(JSON.stringify({ rss: after.rss - before.rss, heap: after.heapUsed - before.heapUsed, ms }));
`;

/** For scale beside the packages a default start does not load (OPTIONAL_PACKAGES): what every start loads. */
const LOADED_PACKAGES = ['fastify', 'kysely', 'better-sqlite3', 'typebox', 'ajv', 'fast-json-stringify', 'jose', 'ws', 'pino'];

/** Each package alone in a fresh process (median of three): what loading it lazily saves, and what the rest costs. */
async function importsScenario() {
  for (const [kind, names] of [
    ['loaded only when configured', OPTIONAL_PACKAGES],
    ['loaded by a default start', LOADED_PACKAGES],
  ] as const) {
    for (const name of names) {
      const runs = Array.from({ length: 3 }, () => JSON.parse(execFileSync(process.execPath, ['--expose-gc', '--input-type=module', '--eval', IMPORT_COST, name], { cwd: ROOT }).toString()) as { rss: number; heap: number; ms: number });
      const mb = (pick: (r: { rss: number; heap: number }) => number) => (median(runs.map(pick)) / 1024 / 1024).toFixed(1);
      say(`| import ${name} (${kind}), alone in a fresh process: resident, JS heap, time | +${mb((r) => r.rss)} MB, +${mb((r) => r.heap)} MB, ${median(runs.map((r) => r.ms)).toFixed(0)} ms | | |`);
    }
  }
}

execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { cwd: ROOT, stdio: 'inherit' });
console.error(`npm start runs ${START_COMMAND}`);
for (const [name, run] of [
  ['start', startScenario],
  ['memory', memoryScenario],
  ['syncs', syncsScenario],
  ['fairness', fairnessScenario],
  ['imports', importsScenario],
] as const) {
  if (SCENARIOS.includes(name)) await run();
}
console.log(`A lean process, Node ${process.version}, ${START_COMMAND} (npm start)\n`);
console.log('| what | Strongroom | ceiling (bare Fastify, or the same process without the load) | ratio |');
console.log('|---|---|---|---|');
for (const line of lines) console.log(line);
