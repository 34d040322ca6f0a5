import { setTimeout as sleep } from 'node:timers/promises';
import { Migrator, sql, type MigrationResultSet } from 'kysely';
import { isBusy } from './dialect.js';
import type { Database } from './database.js';
import { migrations } from './migrations/index.js';

export interface MigrationReport {
  applied: string[];
}

/**
 * Brings the schema up to date. Kysely's migrator holds a lock for the whole run
 * (an advisory lock on PostgreSQL, the write lock on SQLite), so instances starting together
 * apply each migration once. On SQLite a second process can still find the database busy
 * while the first migrates; it retries, and then finds nothing left to do.
 */
export async function migrateToLatest(database: Database): Promise<MigrationReport> {
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => migrations(database.engine) },
    // Kysely looks for its own tables in every schema unless told which one is ours.
    ...(database.engine === 'postgres' ? { migrationTableSchema: await currentSchema(database) } : {}),
  });
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    const result: MigrationResultSet = await migrator.migrateToLatest();
    if (!result.error) {
      return { applied: (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) };
    }
    if (!isBusy(result.error) || Date.now() > deadline) {
      throw result.error instanceof Error ? result.error : new Error('migration failed', { cause: result.error });
    }
    await sleep(Math.min(50 * attempt, 500));
  }
}

async function currentSchema(database: Database): Promise<string> {
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(database.db);
  return rows[0]?.schema ?? 'public';
}
