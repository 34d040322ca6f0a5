/**
 * Item writes side by side: `POST /api/ciphers` (or `PUT /api/ciphers/{id}` with `update`) at
 * 10 connections for BENCH_SECONDS against each code tree given, alternating, each in its own
 * server process on a fresh database; prints the throughput and the CPU time per request of the
 * server and of the PostgreSQL processes (read from /proc around the run, so far steadier than
 * throughput on a shared machine). The server's log is read and dropped, as a log shipper would.
 * Not a test: it measures and prints.
 *   npx tsx bench/writes-cpu.ts [create|update] [ROUNDS] [DIR...]   # DIR: e.g. an exported base commit and . (the default)
 *   BENCH_POSTGRES_URL=postgres://… BENCH_ENGINES=postgres npx tsx bench/writes-cpu.ts update 2 /tmp/base .
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { itemBody } from './items.js';
import { call, CLIENT_HEADERS, cpuMsOf, databaseFor, ENGINES, freePort, measure, registerAndLogin, SECONDS } from './harness.js';

const [mode = 'create', rounds = '1', ...given] = process.argv.slice(2);
/** This tree alone unless others are given. */
const trees = given.length > 0 ? given : ['.'];
const engine = ENGINES[ENGINES.length - 1] ?? 'sqlite';

/** CPU time (ms) of every process named postgres, by process id. */
function postgresCpu(): Map<number, number> {
  const found = new Map<number, number>();
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/stat`, 'utf8').includes('(postgres)')) found.set(Number(pid), cpuMsOf(Number(pid)));
    } catch {
      // The process ended meanwhile.
    }
  }
  return found;
}

async function startTree(tree: string, databaseUrl: string) {
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    cwd: resolve(tree),
    env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, PORT: String(port), LOG_LEVEL: 'info', PASSWORD_ITERATIONS: '100000', PUBLIC_URL: 'http://vault.bench.test', IP_RATE_LIMITING: 'false' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let seen = '';
  await new Promise<void>((ready, fail) => {
    child.stdout.on('data', (chunk: Buffer) => {
      if (seen.length < 100_000) seen += chunk.toString();
      if (seen.includes('Strongroom is ready')) ready();
    });
    child.on('exit', (code) => fail(new Error(`${tree}: exited with ${code}: ${seen}`)));
  });
  return {
    url: `http://127.0.0.1:${port}`,
    pid: child.pid,
    stop: () =>
      new Promise<void>((done) => {
        child.removeAllListeners('exit');
        child.on('exit', () => done());
        child.kill('SIGTERM');
      }),
  };
}

for (let round = 1; round <= Number(rounds); round++) {
  for (const tree of trees) {
    const database = await databaseFor(engine);
    const server = await startTree(tree, database.url);
    try {
      const { token, account } = await registerAndLogin(server.url, 'writes@example.com');
      const headers = { ...CLIENT_HEADERS, authorization: `Bearer ${token}`, 'content-type': 'application/json' };
      const ids: string[] = [];
      for (let i = 0; i < 200; i++) ids.push((JSON.parse(await call(server.url, 'POST', '/api/ciphers', { token, json: itemBody(account, i) })) as { id: string }).id);
      const body = JSON.stringify(itemBody(account, 1));
      let next = 0;
      const serverBefore = cpuMsOf(server.pid);
      const postgresBefore = postgresCpu();
      const figures =
        mode === 'update'
          ? await measure({ url: server.url, connections: 10, requests: [{ method: 'PUT', headers, body, setupRequest: (request) => ({ ...request, path: `/api/ciphers/${ids[next++ % ids.length] ?? ''}` }) }] })
          : await measure({ url: `${server.url}/api/ciphers`, method: 'POST', headers, body, connections: 10 });
      const requests = figures.rps * SECONDS;
      let postgres = 0;
      for (const [pid, ms] of postgresCpu()) postgres += ms - (postgresBefore.get(pid) ?? 0);
      const serverMs = (cpuMsOf(server.pid) - serverBefore) / requests;
      console.log(
        `round ${round}, ${tree}, ${engine} ${mode}: ${figures.rps.toFixed(0)} requests/s, mean ${figures.mean.toFixed(1)} ms, CPU a request: server ${serverMs.toFixed(3)} ms` +
          `${engine === 'postgres' ? `, PostgreSQL ${(postgres / requests).toFixed(3)} ms` : ''}, ${figures.errors} errors`,
      );
    } finally {
      await server.stop();
      await database.drop();
    }
  }
}
