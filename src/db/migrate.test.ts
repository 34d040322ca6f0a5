import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { freshDatabaseUrl, TEST_DATABASE_URL, TEST_ENGINE } from '../../test/support/test-server.js';
import { programArgs } from '../../test/support/program.js';
import { openDatabase } from './database.js';
import { migrateToLatest } from './migrate.js';
import { migrations } from './migrations/index.js';

const root = new URL('../../', import.meta.url).pathname;

/** Runs `strongroom migrate` as its own process, as an instance starting up would. */
function migrateProcess(databaseUrl: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [...programArgs(), 'migrate'], {
      cwd: root,
      env: { PATH: process.env.PATH, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn' },
    });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    child.on('close', (code) => resolve({ code, output }));
  });
}

async function appliedMigrations(databaseUrl: string): Promise<string[]> {
  const database = openDatabase(databaseUrl);
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(database.db);
    return rows.map((r) => r.name);
  } finally {
    await database.close();
  }
}

describe('migrations', () => {
  it('create the schema once and are a no-op the second time', async () => {
    const fresh = await freshDatabaseUrl();
    const database = openDatabase(fresh.url);
    try {
      const first = await migrateToLatest(database);
      expect(first.applied).toEqual(Object.keys(migrations(database.engine)));
      expect((await migrateToLatest(database)).applied).toEqual([]);
      await database.db.selectFrom('users').select('id').execute();
      await database.db.selectFrom('events').select('id').execute();
    } finally {
      await database.close();
      await fresh.drop();
    }
  });

  it.skipIf(TEST_ENGINE !== 'postgres')("say so when PostgreSQL's search_path names no schema that exists", async () => {
    const url = new URL(TEST_DATABASE_URL);
    url.searchParams.set('options', '-c search_path=no_such_schema');
    const database = openDatabase(url.toString());
    try {
      await expect(migrateToLatest(database)).rejects.toThrow("PostgreSQL's search_path (no_such_schema) names no schema that exists");
    } finally {
      await database.close();
    }
  });

  it('do not collide when several instances start together', async () => {
    const fresh =
      TEST_ENGINE === 'sqlite'
        ? { url: `sqlite:${join(mkdtempSync(join(tmpdir(), 'sr-migrate-')), 'db.sqlite')}`, drop: async () => undefined }
        : await freshDatabaseUrl();
    try {
      const results = await Promise.all([migrateProcess(fresh.url), migrateProcess(fresh.url), migrateProcess(fresh.url)]);
      for (const result of results) expect(result.code, result.output).toBe(0);
      const names = await appliedMigrations(fresh.url);
      expect(names).toEqual(Object.keys(migrations(TEST_ENGINE)));
    } finally {
      await fresh.drop();
    }
  }, 60_000);
});
