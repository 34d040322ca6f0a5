import { diagnosedFileProblem, processUser, remedyOf } from '../config/file-problems.js';
import { openDatabase, sqlitePathOf, type Database, type OpenOptions } from './database.js';
import { migrateToLatest } from './migrate.js';
import { NativeModuleMismatch } from './native-module.js';

/** How long the database may take to answer its first query: the pool itself never gives up. */
export const DATABASE_CONNECT_TIMEOUT_MS = 15_000;

const STEP_TEXT = {
  open: (target: string) => `cannot open ${target}`,
  connect: (target: string) => `cannot connect to ${target}`,
  migrate: (target: string) => `cannot bring the schema of ${target} up to date`,
};

/**
 * Why a database could not be made ready, and at which step: `open` and `connect` are the
 * database's or its settings' fault (retry or fix the URL), `migrate` is a schema that cannot be
 * brought up to date.
 */
export class DatabaseNotReady extends Error {
  constructor(
    readonly step: 'open' | 'connect' | 'migrate',
    readonly target: string,
    readonly reason: unknown,
  ) {
    super(STEP_TEXT[step](target));
    this.name = 'DatabaseNotReady';
  }
}

/** A database ready for queries, and the migrations of a newer release it already has (usually none). */
export interface ReadyDatabase {
  database: Database;
  /** Applied migrations this release does not know: it runs on a newer release's schema. */
  newerMigrations: string[];
}

/**
 * Opens the database, checks that it answers within `connectTimeoutMs` and brings its schema up
 * to date: what the server and every operator command need before their first query.
 */
export async function openReadyDatabase(
  url: string,
  options: { poolSize: number; connectTimeoutMs?: number } & Pick<OpenOptions, 'sqliteSynchronous' | 'sqliteCacheMegabytes' | 'postgresPreparedStatements' | 'queryObserver'>,
): Promise<ReadyDatabase> {
  const target = describeDatabase(url);
  let database: Database;
  try {
    const { connectTimeoutMs: _, ...openOptions } = options;
    database = openDatabase(url, openOptions);
  } catch (error) {
    // A better-sqlite3 built for another Node.js is the installation's fault: no database setting mends it.
    if (error instanceof NativeModuleMismatch) throw error;
    throw new DatabaseNotReady('open', target, sqliteFileProblem(url, error));
  }
  let step: 'connect' | 'migrate' = 'connect';
  try {
    await withTimeout(database.ping(), options.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS);
    step = 'migrate';
    const { newer } = await migrateToLatest(database);
    return { database, newerMigrations: newer };
  } catch (error) {
    // Not awaited: closing a pool waits for a connection attempt that may never end.
    void database.close().catch(() => undefined);
    throw new DatabaseNotReady(step, target, sqliteFileProblem(url, error));
  }
}

/** SQLite's errors that come from the file system: it names no path and no permission. */
const SQLITE_FILE_ERRORS = new Set(['SQLITE_CANTOPEN', 'SQLITE_READONLY', 'SQLITE_READONLY_DIRECTORY', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY_DBMOVED']);
const FILE_ERRORS = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOTDIR', 'ENOENT', 'EEXIST']);

/**
 * A SQLite database that cannot be created or written, said with the path, the permission and
 * what to change; other errors as they are. The database and its -wal and -shm files are made
 * beside it, so its folder must be writable too.
 */
function sqliteFileProblem(url: string, error: unknown): unknown {
  const path = sqlitePathOf(url);
  const raw = (error as { code?: unknown }).code;
  const code = typeof raw === 'string' ? raw : '';
  if (path === null || path === ':memory:' || !(SQLITE_FILE_ERRORS.has(code) || FILE_ERRORS.has(code))) return error;
  const problem = diagnosedFileProblem(path, 'write', error);
  if (problem === undefined) return error;
  return new Error(`${problem}; ${remedyOf(problem, 'write')} DATABASE_URL (or DATA_DIR) to a place ${processUser()} may write`);
}

/** The database in words, without its password. */
export function describeDatabase(url: string): string {
  const path = sqlitePathOf(url);
  if (path !== null) return `the SQLite database ${path}`;
  try {
    const parsed = new URL(url);
    return `PostgreSQL at ${parsed.hostname}:${parsed.port || 5432}${parsed.pathname}`;
  } catch {
    return 'PostgreSQL';
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
