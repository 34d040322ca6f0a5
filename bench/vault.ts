/**
 * Vault benchmark: sync of a 10,000-item vault, item create and update throughput, on SQLite
 * and PostgreSQL, with the server in its own process; and, as the ceiling, a bare Node http
 * server sending the same sync bytes. Not a test: it measures and prints.
 *
 *   npx tsx bench/vault.ts                      # SQLite, and PostgreSQL when BENCH_POSTGRES_URL is set
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:55433/strongroom_test npx tsx bench/vault.ts
 *
 * Options (environment): BENCH_ITEMS (10000), BENCH_SECONDS (10), BENCH_ENGINES (sqlite,postgres).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import pg from 'pg';
import { passwordGrantForm } from '../test/support/accounts.js';
import { makeTestAccount, registerFinishBody, type TestAccount } from '../test/support/bw-crypto.js';
import { itemBody } from './items.js';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const ITEMS = Number(process.env.BENCH_ITEMS ?? 10_000);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const PG_URL = process.env.BENCH_POSTGRES_URL;
const ENGINES = (process.env.BENCH_ENGINES ?? (PG_URL ? 'sqlite,postgres' : 'sqlite')).split(',');
const CLIENT_HEADERS = { 'bitwarden-client-version': '2026.9.0', 'device-type': '25' };

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

function waitForLine(child: ChildProcess, pattern: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const onData = (chunk: Buffer) => {
      seen += chunk.toString();
      const match = pattern.exec(seen);
      if (match) {
        child.stdout?.off('data', onData);
        resolve(match[1] ?? match[0]);
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => process.stderr.write(chunk));
    child.on('exit', (code) => reject(new Error(`process exited with ${code}: ${seen}`)));
  });
}

async function startServer(databaseUrl: string, env: Record<string, string> = {}): Promise<{ url: string; stop(): Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'info', PASSWORD_ITERATIONS: '100000', PUBLIC_URL: 'http://vault.bench.test', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await waitForLine(child, /Strongroom is ready/);
  return { url: `http://127.0.0.1:${port}`, stop: () => stop(child) };
}

async function startCeiling(file: string): Promise<{ url: string; stop(): Promise<void> }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/ceiling-server.ts', file], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const port = await waitForLine(child, /^(\d+)\n/m);
  return { url: `http://127.0.0.1:${port}`, stop: () => stop(child) };
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.on('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

async function call(base: string, method: string, path: string, init: { token?: string; json?: unknown; form?: Record<string, string> } = {}) {
  const headers: Record<string, string> = { ...CLIENT_HEADERS };
  let body: string | undefined;
  if (init.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(init.json);
  }
  if (init.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(init.form).toString();
  }
  if (init.token) headers.authorization = `Bearer ${init.token}`;
  const res = await fetch(base + path, { method, headers, ...(body ? { body } : {}) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text.slice(0, 300)}`);
  return text;
}


async function seed(base: string): Promise<{ token: string; ids: string[]; account: TestAccount }> {
  const account = makeTestAccount({ email: 'bench@example.com' });
  await call(base, 'POST', '/identity/accounts/register/finish', { json: registerFinishBody(account) });
  const login = JSON.parse(
    await call(base, 'POST', '/identity/connect/token', {
      form: passwordGrantForm(account, { deviceType: '25', deviceIdentifier: 'b0b0b0b0-0000-4000-8000-000000000001', deviceName: 'bench' }),
    }),
  ) as { access_token: string };
  const token = login.access_token;
  for (let start = 0; start < ITEMS; start += 5000) {
    const ciphers = Array.from({ length: Math.min(5000, ITEMS - start) }, (_, i) => itemBody(account, start + i));
    await call(base, 'POST', '/api/ciphers/import', { token, json: { folders: [], ciphers, folderRelationships: [] } });
  }
  const list = JSON.parse(await call(base, 'GET', '/api/ciphers', { token })) as { data: { id: string }[] };
  return { token, ids: list.data.map((c) => c.id), account };
}

interface Figures {
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  rps: number;
  bytes: number;
  errors: number;
}

async function measure(options: autocannon.Options): Promise<Figures> {
  const result = await autocannon({ duration: SECONDS, ...options });
  return {
    mean: result.latency.average,
    p50: result.latency.p50,
    p90: result.latency.p90,
    p99: result.latency.p99,
    max: result.latency.max,
    rps: result.requests.average,
    bytes: result.requests.total ? Math.round(result.throughput.total / result.requests.total) : 0,
    errors: result.errors + result.non2xx,
  };
}

async function databaseFor(engine: string): Promise<{ url: string; drop(): Promise<void> }> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'sr-bench-'));
    return { url: `sqlite:${join(dir, 'bench.sqlite')}`, drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (!PG_URL) throw new Error('BENCH_POSTGRES_URL is not set');
  const schema = `bench_${Date.now()}`;
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  const url = new URL(PG_URL);
  url.searchParams.set('options', `-c search_path=${schema}`);
  return {
    url: url.toString(),
    async drop() {
      const client = new pg.Client({ connectionString: PG_URL });
      await client.connect();
      await client.query(`drop schema ${schema} cascade`);
      await client.end();
    },
  };
}

const rows: string[] = [];
const row = (engine: string, what: string, c: number, f: Figures) =>
  rows.push(
    `| ${engine} | ${what} | ${c} | ${f.mean.toFixed(1)} | ${f.p50} | ${f.p90} | ${f.p99} | ${f.max} | ${f.rps.toFixed(1)} | ${f.bytes.toLocaleString('en-US')} | ${f.errors} |`,
  );

async function benchEngine(engine: string) {
  const database = await databaseFor(engine);
  let server = await startServer(database.url);
  try {
    const { token, ids, account } = await seed(server.url);
    const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}` };
    const syncPath = '/api/sync?excludeDomains=true';
    const bytes = await call(server.url, 'GET', syncPath, { token });
    const file = join(tmpdir(), `sr-bench-sync-${engine}.json`);
    writeFileSync(file, bytes);
    console.error(`${engine}: ${ids.length} items, sync body ${bytes.length.toLocaleString('en-US')} bytes`);

    // Sync of the seeded vault, unchanged between syncs (the usual case: several devices,
    // unlocks), and with the sync cache off (every sync reads and writes every item, as the
    // first sync after a change does).
    const ceiling = await startCeiling(file);
    const ratios: string[] = [];
    try {
      for (const [mode, env] of [
        ['vault unchanged', {}],
        ['cache off', { SYNC_CACHE_MEGABYTES: '0' }],
      ] as const) {
        await server.stop();
        server = await startServer(database.url, env);
        await call(server.url, 'GET', syncPath, { token });
        for (const connections of [1, 4]) {
          const ours = await measure({ url: server.url + syncPath, headers, connections });
          const bare = await measure({ url: ceiling.url + syncPath, connections });
          row(engine, `sync, ${mode}`, connections, ours);
          row(engine, 'sync, bare http ceiling', connections, bare);
          ratios.push(
            `${engine}, ${mode}, ${connections} connection(s): mean ${(ours.mean / bare.mean).toFixed(2)}x, p50 ${(ours.p50 / Math.max(bare.p50, 1)).toFixed(2)}x, p99 ${(ours.p99 / bare.p99).toFixed(2)}x, throughput ${(bare.rps / ours.rps).toFixed(2)}x`,
          );
        }
      }
    } finally {
      await ceiling.stop();
    }

    await server.stop();
    server = await startServer(database.url);
    const create = JSON.stringify(itemBody(account, 1));
    row(engine, 'create item', 10, await measure({ url: `${server.url}/api/ciphers`, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: create, connections: 10 }));
    let next = 0;
    const update = JSON.stringify(itemBody(account, 2));
    row(
      engine,
      'update item',
      10,
      await measure({
        url: server.url,
        connections: 10,
        requests: [
          {
            method: 'PUT',
            headers: { ...headers, 'content-type': 'application/json' },
            body: update,
            setupRequest: (request) => ({ ...request, path: `/api/ciphers/${ids[next++ % ids.length] ?? ''}` }),
          },
        ],
      }),
    );

    return ratios;
  } finally {
    await server.stop();
    await database.drop();
  }
}

const ratios: string[] = [];
for (const engine of ENGINES) ratios.push(...(await benchEngine(engine)));
console.log(`${ITEMS} items, ${SECONDS} s per run, Node ${process.version}\n`);
console.log('| engine | what | connections | mean ms | p50 ms | p90 ms | p99 ms | max ms | req/s | bytes/response | errors |');
console.log('|---|---|---|---|---|---|---|---|---|---|---|');
for (const line of rows) console.log(line);
console.log('\nSync latency relative to the ceiling (Strongroom / bare http):');
for (const line of ratios) console.log(`- ${line}`);
