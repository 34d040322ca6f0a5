/**
 * Notifications hub benchmark: 10,000 concurrent hub connections on one instance (the memory
 * each idle connection costs the server, and the latency from `pushes.send` to the push
 * arriving at a connected client at 100 pushes/s), then the same latency across two instances
 * through Redis (sent on one, delivered by the other). Not a test.
 *
 *   npx tsx bench/notifications.ts
 *   BENCH_REDIS_URL=redis://127.0.0.1:6379 npx tsx bench/notifications.ts   # adds the two-instance run
 *
 * Options (environment): BENCH_CONNECTIONS (10000), BENCH_PER_USER (5: connections per user, as
 * a user's devices and tabs), BENCH_PUSH_RATE (100 a second), BENCH_SECONDS (20 of pushes per run).
 *
 * The sending server runs in this process (pushes are sent where the change is made); the
 * clients run in a child process (bench/notifications-clients.ts), raw WebSockets speaking the
 * MessagePack hub protocol as the apps do; each push carries its send time, read on arrival
 * (both processes read the same clock). In the two-instance run the receiving server is a third
 * process (`src/main.ts`). The script re-runs itself with --expose-gc and the raised
 * file-descriptor limit (`ulimit -n`) it needs.
 */
import { execFileSync, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrateToLatest } from '../src/db/migrate.js';
import { PushType } from '../src/platform/push/pushes.js';
import { databaseFor, registerAndLogin, ROOT, startServer, summary, type Running } from './harness.js';
import { startClients, type Clients } from './hub-clients.js';

const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 10_000);
const PER_USER = Number(process.env.BENCH_PER_USER ?? 5);
const RATE = Number(process.env.BENCH_PUSH_RATE ?? 100);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 20);
const REDIS_URL = process.env.BENCH_REDIS_URL;
const USERS = Math.ceil(CONNECTIONS / PER_USER);
const HUB_ENV = { NOTIFICATIONS_MAX_CONNECTIONS_PER_USER: String(PER_USER), NOTIFICATIONS_MAX_CONNECTIONS_PER_IP: String(CONNECTIONS + 100), MAX_CONNECTIONS_PER_IP: '0' };
const FD_NEEDED = CONNECTIONS + 1000;

const now = () => performance.timeOrigin + performance.now();

/** Re-runs the script with --expose-gc and as many file descriptors as the hard limit allows. */
function reexecIfNeeded(): boolean {
  if (process.env.BENCH_NOTIFICATIONS_CHILD === '1') return false;
  const script = `limit=$(ulimit -Hn); if [ "$limit" = unlimited ] || [ "$limit" -gt ${FD_NEEDED * 2} ]; then limit=${FD_NEEDED * 2}; fi; ulimit -n "$limit"; exec "$0" --expose-gc --import tsx bench/notifications.ts`;
  const child = spawn('sh', ['-c', script, process.execPath], { cwd: ROOT, stdio: 'inherit', env: { ...process.env, BENCH_NOTIFICATIONS_CHILD: '1' } });
  child.on('exit', (code) => process.exit(code ?? 1));
  return true;
}

function gc(): void {
  const collect = (globalThis as { gc?: () => void }).gc;
  collect?.();
  collect?.();
}

async function startApp(databaseUrl: string, env: Record<string, string>): Promise<{ app: FastifyInstance; database: Database; url: string }> {
  // The PUBLIC_URL of harness.startServer: both instances issue and accept the same tokens.
  const config = loadConfig({ DATABASE_URL: databaseUrl, PUBLIC_URL: 'http://vault.bench.test', LOG_LEVEL: 'warn', PASSWORD_ITERATIONS: '100000', PORT: '0', ...HUB_ENV, ...env });
  const database = openDatabase(config.databaseUrl, { poolSize: 4 });
  await migrateToLatest(database);
  const app = await buildApp({ config, database });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const address = app.server.address();
  return { app, database, url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}` };
}

/** USERS accounts: one registered through the routes, the others copies of its row; one access token each. */
async function seedUsers(app: FastifyInstance, database: Database, url: string): Promise<{ userId: string; token: string }[]> {
  await registerAndLogin(url, 'hub-bench@example.com');
  const db = database.db;
  const template = await db.selectFrom('users').selectAll().where('email', '=', 'hub-bench@example.com').executeTakeFirstOrThrow();
  const rows = Array.from({ length: USERS }, (_, i) => ({ ...template, id: randomUUID(), email: `hub-bench-${i}@example.com`, api_key: randomUUID() }));
  for (let i = 0; i < rows.length; i += 200) await db.insertInto('users').values(rows.slice(i, i + 200)).execute();
  const users: { userId: string; token: string }[] = [];
  for (const row of rows) {
    const issued = await app.features.tokens.issueUserTokens({ user: row, device: null, clientId: 'web', scopes: ['api'], withRefreshToken: false });
    users.push({ userId: row.id, token: issued.accessToken });
  }
  return users;
}

interface Latency {
  pushes: number;
  expected: number;
  arrived: number;
  p50: number;
  p99: number;
  max: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
}

/** RATE pushes a second for SECONDS, each to one user (so to its PER_USER connections), on `send`. */
async function pushLoad(send: FastifyInstance, users: { userId: string }[], clients: Clients): Promise<Latency> {
  // Two seconds at the same rate first, not counted: the first pushes pay for compiling the code paths.
  await pushes(send, users, RATE * 2);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  clients.reset();
  const total = RATE * SECONDS;
  await pushes(send, users, total);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const latencies = (await clients.latencies()).sort((a, b) => a - b);
  return {
    pushes: total,
    expected: total * PER_USER,
    arrived: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies[latencies.length - 1] ?? NaN,
  };
}

async function pushes(send: FastifyInstance, users: { userId: string }[], total: number): Promise<void> {
  const started = now();
  let sent = 0;
  while (sent < total) {
    const due = Math.min(total, Math.floor(((now() - started) / 1000) * RATE) + 1);
    for (; sent < due; sent++) {
      const user = users[sent % users.length]!;
      send.features.pushes.send({
        type: PushType.SyncCipherUpdate,
        payload: { Id: randomUUID(), UserId: user.userId, OrganizationId: null, CollectionIds: null, RevisionDate: new Date(), SentAt: now() },
        contextId: null,
        target: { user: user.userId },
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

function rssOf(pid: number): number {
  const status = execFileSync('cat', [`/proc/${pid}/status`]).toString();
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) * 1024;
}

const rows: string[] = [];
const row = (what: string, l: Latency): void => {
  summary('notifications', { what: `push latency p99, ${what}, ${CONNECTIONS.toLocaleString('en-US')} connections`, strongroom: l.p99, unit: 'ms', better: 'lower' });
  rows.push(`| ${what} | ${CONNECTIONS.toLocaleString('en-US')} | ${l.pushes.toLocaleString('en-US')} | ${l.arrived.toLocaleString('en-US')} / ${l.expected.toLocaleString('en-US')} | ${l.p50.toFixed(2)} | ${l.p99.toFixed(2)} | ${l.max.toFixed(2)} |`);
};

async function main(): Promise<void> {
  const database = await databaseFor('sqlite');
  // One instance, in-process delivery.
  const one = await startApp(database.url, {});
  const users = await seedUsers(one.app, one.database, one.url);
  const clients = await startClients();
  gc();
  await new Promise((resolve) => setTimeout(resolve, 500));
  gc();
  const before = process.memoryUsage();
  const opened = await clients.connect(`${one.url.replace('http', 'ws')}/notifications/hub`, users.map((u) => u.token), PER_USER);
  await new Promise((resolve) => setTimeout(resolve, 3000));
  gc();
  const after = process.memoryUsage();
  const open = one.app.features.notifications.hub.connectionCount();
  const memory = {
    rss: (after.rss - before.rss) / open,
    heap: (after.heapUsed - before.heapUsed) / open,
    external: (after.external + after.arrayBuffers - before.external - before.arrayBuffers) / open,
  };
  console.error(`one instance: ${opened.ready} connections open (${opened.failed} failed), server holds ${open}`);
  row('one instance (in-process)', await pushLoad(one.app, users, clients));
  await clients.stop();
  await one.app.close();
  await one.database.close();

  let across: Running | undefined;
  if (REDIS_URL) {
    // Two instances over one database: this process sends, a second server process holds the connections.
    across = await startServer(database.url, { ...HUB_ENV, REDIS_URL });
    const sender = await startApp(database.url, { REDIS_URL });
    const acrossClients = await startClients();
    const acrossOpened = await acrossClients.connect(`${across.url.replace('http', 'ws')}/notifications/hub`, users.map((u) => u.token), PER_USER);
    console.error(`two instances: ${acrossOpened.ready} connections open on the receiving instance (${acrossOpened.failed} failed)`);
    await new Promise((resolve) => setTimeout(resolve, 2000));
    row('two instances through Redis', await pushLoad(sender.app, users, acrossClients));
    const receiverPid = Number(execFileSync('sh', ['-c', `ss -ltnpH 'sport = :${new URL(across.url).port}' | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2`]).toString().trim());
    if (receiverPid) console.error(`receiving instance RSS with ${acrossOpened.ready} connections: ${(rssOf(receiverPid) / 1024 / 1024).toFixed(0)} MB`);
    await acrossClients.stop();
    await sender.app.close();
    await sender.database.close();
    await across.stop();
  }
  await database.drop();

  console.log(`Notifications hub, ${CONNECTIONS.toLocaleString('en-US')} connections (${PER_USER} per user), ${RATE} pushes/s for ${SECONDS} s, Node ${process.version}\n`);
  console.log(
    `Memory per idle connection (server process, after GC): RSS ${(memory.rss / 1024).toFixed(1)} KB, JS heap ${(memory.heap / 1024).toFixed(1)} KB, buffers ${(memory.external / 1024).toFixed(1)} KB\n`,
  );
  console.log('| run | connections | pushes | arrivals | p50 ms | p99 ms | max ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const line of rows) console.log(line);
  process.exit(0);
}

if (!reexecIfNeeded()) {
  main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
}
