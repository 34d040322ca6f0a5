/**
 * Tracing benchmark: what OTEL_ENABLED costs. Three servers on one database: traces off (the
 * ceiling), every request traced, and one request in ten (OTEL_TRACES_SAMPLER_ARG=0.1), the
 * traced ones exporting over OTLP/HTTP to a local receiver that reads and drops the spans,
 * measured in turn on the same workloads: sync of a 100-item vault (about 10
 * statements a request) and folder creation (a write transaction). Also each server's resident
 * memory after the runs. Not a test: it measures and prints.
 *
 *   npx tsx bench/tracing.ts
 *   BENCH_POSTGRES_URL=postgres://postgres@127.0.0.1:55433/strongroom_test npx tsx bench/tracing.ts
 *
 * Options (environment): BENCH_SECONDS (10), BENCH_ENGINES (sqlite,postgres).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encryptText } from '../test/support/bw-crypto.js';
import { itemBody } from './items.js';
import { call, CLIENT_HEADERS, databaseFor, ENGINES, measure, registerAndLogin, Results, startServer, type Figures } from './harness.js';

const ITEMS = 100;

/** A stand-in OTLP/HTTP receiver: reads each export and answers 200. */
async function startReceiver(): Promise<{ url: string; exports: () => number; bytes: () => number; close(): Promise<void> }> {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk: Buffer) => (bytes += chunk.length));
    req.on('end', () => {
      exports++;
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, exports: () => exports, bytes: () => bytes, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

function residentMb(pid: number | undefined): number {
  if (!pid) return NaN;
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match?.[1] ? Number(match[1]) / 1024 : NaN;
}

const results = new Results();
const memory: string[] = [];

async function benchEngine(engine: string) {
  const database = await databaseFor(engine);
  const receiver = await startReceiver();
  const off = await startServer(database.url);
  const on = await startServer(database.url, { OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
  const tenth = await startServer(database.url, { OTEL_ENABLED: 'true', OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_TRACES_SAMPLER_ARG: '0.1' });
  try {
    const { token, account } = await registerAndLogin(off.url, 'bench-tracing@example.com');
    const ciphers = Array.from({ length: ITEMS }, (_, i) => itemBody(account, i));
    await call(off.url, 'GET', '/api/sync', { token });
    await call(off.url, 'POST', '/api/ciphers/import', { token, json: { folders: [], ciphers, folderRelationships: [] } });
    const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}` };
    const folder = JSON.stringify({ name: encryptText('bench folder', account.userKey) });
    const workloads: [string, (base: string) => Promise<Figures>][] = [
      ['sync, 100 items', (base) => measure({ url: `${base}/api/sync?excludeDomains=true`, headers, connections: 4 })],
      ['create folder', (base) => measure({ url: `${base}/api/folders`, method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: folder, connections: 4 })],
    ];
    for (const [what, run] of workloads) {
      // Warm both, then measure them one after the other.
      await run(off.url);
      await run(on.url);
      await run(tenth.url);
      const ceiling = await run(off.url);
      const traced = await run(on.url);
      const sampled = await run(tenth.url);
      results.row(engine, `${what}, traces off`, 4, ceiling);
      results.row(engine, `${what}, traces on`, 4, traced);
      results.row(engine, `${what}, traces on, 1 in 10`, 4, sampled);
      results.ratio(`${engine}, ${what}, every request`, traced, ceiling);
      results.ratio(`${engine}, ${what}, 1 in 10`, sampled, ceiling);
    }
    memory.push(
      `${engine}: resident memory after the runs ${residentMb(off.pid).toFixed(0)} MB with traces off, ${residentMb(on.pid).toFixed(0)} MB with every request traced, ${residentMb(tenth.pid).toFixed(0)} MB with 1 in 10; ${receiver.exports()} exports, ${(receiver.bytes() / 1e6).toFixed(1)} MB of spans received`,
    );
  } finally {
    await off.stop();
    await on.stop();
    await tenth.stop();
    await receiver.close();
    await database.drop();
  }
}

for (const engine of ENGINES) await benchEngine(engine);
results.print('Tracing: traces on (every span exported over OTLP/HTTP) against traces off, on the same database', 'Traces on against off (the ceiling): how much slower');
console.log('');
for (const line of memory) console.log(`- ${line}`);
