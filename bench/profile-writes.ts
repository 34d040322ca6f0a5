/**
 * Where the time of item writes goes: the server in its own process under `--cpu-prof`,
 * `POST /api/ciphers` (or `PUT /api/ciphers/{id}` with `update`) at 10 connections for
 * BENCH_SECONDS, then the throughput, the server's CPU time per request (far steadier than
 * throughput on a shared machine) and the functions that took the most CPU time (self time). Not a test: it measures and prints.
 *   npx tsx bench/profile-writes.ts [create|update]
 *   BENCH_POSTGRES_URL=postgres://… BENCH_ENGINES=postgres npx tsx bench/profile-writes.ts
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { itemBody } from './items.js';
import { call, CLIENT_HEADERS, cpuMsOf, databaseFor, ENGINES, measure, registerAndLogin, SECONDS, startServer } from './harness.js';
import { printProfile } from './profiling.js';

const mode = process.argv[2] === 'update' ? 'update' : 'create';
const engine = ENGINES[ENGINES.length - 1] ?? 'sqlite';
const database = await databaseFor(engine);
const dir = mkdtempSync(join(tmpdir(), 'sr-prof-writes-'));
const server = await startServer(database.url, { LOG_LEVEL: 'info' }, ['--cpu-prof', `--cpu-prof-dir=${dir}`]);
try {
  const { token, account } = await registerAndLogin(server.url, 'writes@example.com');
  const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
  const body = JSON.stringify(itemBody(account, 1));
  const ids: string[] = [];
  for (let i = 0; i < 200; i++) ids.push((JSON.parse(await call(server.url, 'POST', '/api/ciphers', { token, json: itemBody(account, i) })) as { id: string }).id);
  let next = 0;
  const cpuBefore = cpuMsOf(server.pid ?? 0);
  const figures =
    mode === 'create'
      ? await measure({ url: `${server.url}/api/ciphers`, method: 'POST', headers, body, connections: 10 })
      : await measure({
          url: server.url,
          connections: 10,
          requests: [{ method: 'PUT', headers, body, setupRequest: (request) => ({ ...request, path: `/api/ciphers/${ids[next++ % ids.length] ?? ''}` }) }],
        });
  const requests = figures.rps * SECONDS;
  const cpu = (cpuMsOf(server.pid ?? 0) - cpuBefore) / requests;
  console.log(`${engine} ${mode}: ${figures.rps.toFixed(0)} requests/s, mean ${figures.mean.toFixed(1)} ms, server CPU ${cpu.toFixed(3)} ms a request, ${figures.errors} errors`);
} finally {
  await server.stop();
  await database.drop();
}
printProfile(dir);
