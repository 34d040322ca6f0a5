import { setTimeout as sleep } from 'node:timers/promises';
import { Migrator, sql, type Migration, type MigrationResultSet } from 'kysely';
import { isBusy } from './dialect.js';
import type { Database } from './database.js';
import { migrations } from './migrations/index.js';

export interface MigrationReport {
  applied: string[];
  /**
   * Migrations of a newer release already applied to the database, which this code does not
   * know: it runs on their schema, as the compatibility rule promises (docs/operations.md).
   */
  newer: string[];
}

/**
 * Brings the schema up to date. Kysely's migrator holds a lock for the whole run
 * (an advisory lock on PostgreSQL, the write lock on SQLite), so instances starting together
 * apply each migration once. On SQLite a second process can still find the database busy
 * while the first migrates; it retries, and then finds nothing left to do.
 */
export async function migrateToLatest(database: Database, options: { migrations?: Record<string, Migration> } = {}): Promise<MigrationReport> {
  const known = options.migrations ?? migrations(database.engine);
  // During a rolling upgrade an instance of the previous release may (re)start after the new
  // release migrated: it serves on that schema rather than refuse to start.
  const newer = await newerMigrations(database, known);
  if (newer.length > 0) return { applied: [], newer };
  const migrator = new Migrator({
    db: database.db,
    provider: { getMigrations: async () => known },
    // Kysely orders migrations run in the same millisecond with localeCompare unless given this,
    // and that first locale-aware call maps ICU's data into the process for good (about 2 MB
    // resident at every start on an existing database). Code-unit order is the order Kysely
    // sorts the known migrations in, so the two lists it compares agree.
    nameComparator: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
    // Kysely looks for its own tables in every schema unless told which one is ours.
    ...(database.engine === 'postgres' ? { migrationTableSchema: await currentSchema(database) } : {}),
  });
  const deadline = Date.now() + 60_000;
  for (let attempt = 1; ; attempt++) {
    const result: MigrationResultSet = await migrator.migrateToLatest();
    if (!result.error) {
      return { applied: (result.results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName), newer: [] };
    }
    // A newer release migrated between the check above and the migrator's lock.
    if (result.error instanceof Error && result.error.message.includes('corrupted migrations: previously executed migration')) {
      const later = await newerMigrations(database, known);
      if (later.length > 0) return { applied: [], newer: later };
    }
    if (!isBusy(result.error) || Date.now() > deadline) {
      throw result.error instanceof Error ? result.error : new Error('migration failed', { cause: result.error });
    }
    await sleep(Math.min(50 * attempt, 500));
  }
}

/**
 * The applied migrations `known` does not name, when every known one is applied: the database is
 * a newer release's. Unknown ones beside known ones still pending are refused: that database is
 * not an upgrade of this release (another branch, or a release skipped back over).
 */
async function newerMigrations(database: Database, known: Record<string, Migration>): Promise<string[]> {
  let applied: string[];
  try {
    const { rows } = await sql<{ name: string }>`select name from kysely_migration`.execute(database.db);
    applied = rows.map((row) => row.name);
  } catch {
    // No migration table yet: a new database, for the migrator to set up.
    return [];
  }
  const unknown = applied.filter((name) => !Object.hasOwn(known, name)).sort();
  if (unknown.length === 0) return [];
  const pending = Object.keys(known).filter((name) => !applied.includes(name));
  if (pending.length > 0) {
    throw new Error(
      `the database has migrations this release does not know (${unknown.join(', ')}) while its own ${pending.join(', ')} are not applied: it is not an upgrade of this release`,
    );
  }
  return unknown;
}

/** The schema the connections work in: the first of their search_path that exists. */
async function currentSchema(database: Database): Promise<string> {
  const { rows } = await sql<{ schema: string | null; path: string }>`select current_schema() as schema, current_setting('search_path') as path`.execute(database.db);
  const schema = rows[0]?.schema;
  if (!schema) {
    throw new Error(`PostgreSQL's search_path (${rows[0]?.path ?? ''}) names no schema that exists: create the schema, or set search_path to one that exists`);
  }
  return schema;
}
