import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { ensureKeyPool } from './support/key-pool.js';

/**
 * Names this run for its PostgreSQL schemas (`t_<run>_…`, see test-server.ts): the workers,
 * forked after this, inherit it, and teardown drops only this run's schemas, so two runs on one
 * database (a single file beside the whole suite) leave each other's alone.
 */
export async function setup(project: TestProject): Promise<void> {
  process.env.STRONGROOM_TEST_RUN ??= randomBytes(3).toString('hex');
  // The tests of the built server (test/e2e, the program tests) run dist/: build it here, when
  // src/ changed (in CI `npm ci` has built it), rather than in test files running side by side;
  // in watch mode again before each rerun, so they never run a build older than the source.
  buildIfStale();
  project.onTestsRerun(buildIfStale);
  // The test accounts' key pairs, made once per machine rather than in every test file.
  await ensureKeyPool();
}

function buildIfStale(): void {
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build-if-stale.mjs', import.meta.url))], { stdio: 'inherit' });
}

/** Drops the run's per-server schemas, once every worker is done. */
export async function teardown(): Promise<void> {
  const url = process.env.DATABASE_URL;
  const run = process.env.STRONGROOM_TEST_RUN;
  if (!url?.startsWith('postgres') || !run) return;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>('select nspname as name from pg_namespace where nspname like $1', [`t\\_${run}\\_%`]);
    for (const { name } of rows) await client.query(`drop schema if exists ${name} cascade`);
  } finally {
    await client.end();
  }
}
