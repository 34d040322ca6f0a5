/**
 * Durability under a process crash: the server runs as its own process (src/main.ts) on a
 * database of its own (a SQLite file, or a PostgreSQL schema under DATABASE_URL), several
 * clients create folders concurrently, every acknowledged write is recorded, the process is
 * killed with SIGKILL mid-load, and a new process on the same database must open it cleanly and
 * hold every acknowledged write. CRASH_ROUNDS rounds (2 by default) crash the same database
 * again and again; each round prints its figures.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { createUser } from '../support/accounts.js';
import { assertCleanLog } from '../support/log-audit.js';
import { createSchema } from '../support/pg-schema.js';
import { freePort, killPrograms, startProgram, waitFor, type Program } from '../support/program.js';
import { httpRequest, TEST_DATABASE_URL, TEST_ENGINE, type TestServer } from '../support/test-server.js';
import { openDatabase } from '../../src/db/database.js';

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? 2);
const CLIENTS = 6;
/** How long the load runs before the kill (the kill lands while requests are in flight). */
const LOAD_MS = 1500;

const folder = mkdtempSync(join(tmpdir(), 'strongroom-crash-'));
afterAll(() => {
  killPrograms();
  rmSync(folder, { recursive: true, force: true });
});

async function databaseUrl(): Promise<string> {
  if (TEST_ENGINE === 'sqlite') return `sqlite:${join(folder, 'crash.sqlite')}`;
  return createSchema(TEST_DATABASE_URL, `t_${process.env.STRONGROOM_TEST_RUN ?? 'norun'}_crash_${randomBytes(4).toString('hex')}`);
}

interface Running {
  program: Program;
  baseUrl: string;
}

async function start(url: string, port: number): Promise<Running> {
  const program = startProgram({ DATABASE_URL: url, PORT: String(port), LOG_LEVEL: 'info', PASSWORD_ITERATIONS: '100000', DATA_DIR: folder, PUBLIC_URL: 'http://vault.crash.test' });
  await waitFor(() => program.stdout().includes('Strongroom is ready') || program.proc.exitCode !== null, 90_000);
  if (program.proc.exitCode !== null) throw new Error(`the server did not start on its database:\n${program.output()}`);
  return { program, baseUrl: `http://127.0.0.1:${port}` };
}

/** A folder name as a client sends it: an EncString, unique to the write. */
const encName = () => `2.${randomBytes(16).toString('base64')}|${randomBytes(16).toString('base64')}|${randomBytes(32).toString('base64')}`;

/** CLIENTS loops creating folders until `stop`; answers the ids the server acknowledged, and how many requests failed. */
async function load(baseUrl: string, token: string, stopAt: Promise<void>): Promise<{ acknowledged: string[]; failed: number }> {
  const acknowledged: string[] = [];
  let failed = 0;
  let stopped = false;
  void stopAt.then(() => (stopped = true));
  const agent = new Agent({ connections: CLIENTS });
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (!stopped) {
        try {
          const res = await httpRequest(baseUrl, 'POST', '/api/folders', { token, json: { name: encName() } }, agent);
          if (res.status === 200 && typeof res.body?.id === 'string') acknowledged.push(res.body.id);
          else failed += 1;
        } catch {
          // The connection died with the process: not acknowledged.
          failed += 1;
          await new Promise((r) => setTimeout(r, 10));
        }
      }
    }),
  );
  await agent.destroy();
  return { acknowledged, failed };
}

describe(`a kill -9 under concurrent writes (${TEST_ENGINE})`, () => {
  it('loses no acknowledged write, and the database opens cleanly afterwards', async () => {
    const url = await databaseUrl();
    const port = await freePort();
    let running = await start(url, port);
    const client = { request: (method: string, path: string, options?: object) => httpRequest(running.baseUrl, method, path, options) } as unknown as TestServer;
    const user = await createUser(client, { email: `crash-${randomUUID().slice(0, 8)}@example.com` });
    const all: string[] = [];

    for (let round = 1; round <= ROUNDS; round++) {
      let kill!: () => void;
      const killed = new Promise<void>((resolve) => (kill = resolve));
      const loading = load(running.baseUrl, user.accessToken, killed);
      await new Promise((r) => setTimeout(r, LOAD_MS));
      running.program.proc.kill('SIGKILL');
      await running.program.exited;
      kill();
      assertCleanLog(running.program.stdout().split('\n'), `the server program of round ${round}`);
      const { acknowledged, failed } = await loading;
      all.push(...acknowledged);

      running = await start(url, port);
      const res = await httpRequest(running.baseUrl, 'GET', '/api/folders', { token: user.accessToken });
      expect(res.status, res.text).toBe(200);
      const found = new Set((res.body.data as { id: string }[]).map((f) => f.id));
      const lost = all.filter((id) => !found.has(id));
      console.log(
        `crash (${TEST_ENGINE}) round ${round}: ${acknowledged.length} writes acknowledged this round (${failed} failed or refused around the kill), ${all.length - lost.length} of ${all.length} acknowledged writes found after restart; ${found.size - (all.length - lost.length)} unacknowledged writes also committed`,
      );
      expect(lost, `acknowledged folders missing after the crash of round ${round}`).toEqual([]);
      expect(acknowledged.length, 'the load wrote something before the kill').toBeGreaterThan(0);
    }

    // Stop the last server gracefully, then check the database itself.
    running.program.proc.kill('SIGTERM');
    await running.program.exited;
    const database = openDatabase(url, { poolSize: 1 });
    try {
      if (database.engine === 'sqlite') {
        const { rows } = await sql<{ integrity_check: string }>`pragma integrity_check`.execute(database.db);
        expect(rows.map((r) => r.integrity_check)).toEqual(['ok']);
      }
      const count = await database.db.selectFrom('folders').select((eb) => eb.fn.countAll<string>().as('n')).where('user_id', '=', user.userId).executeTakeFirstOrThrow();
      expect(Number(count.n)).toBeGreaterThanOrEqual(all.length);
    } finally {
      await database.close();
    }
  }, 300_000);
});
