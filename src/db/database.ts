import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { Kysely, sql, type Dialect, type Transaction } from 'kysely';
import type { Pool } from 'pg';
import { StrongroomPostgresDialect } from './postgres-dialect.js';
import { preparingPool } from './prepared-statements.js';
import { cachingStatements, LockingSqliteDialect, type Engine } from './dialect.js';
import { openSqliteFile } from './native-module.js';
import { ObservedDialect, type QueryObserver } from './observed-dialect.js';
import type { DB } from './schema.js';

export type Db = Kysely<DB>;
/** The database or an open transaction: what a repository function writes through. */
export type Executor = Kysely<DB> | Transaction<DB>;

export interface Database {
  readonly db: Db;
  readonly engine: Engine;
  /** Answers when the database takes a trivial query; throws otherwise. */
  ping(): Promise<void>;
  /** The connection pool's use now (PostgreSQL; SQLite has one connection, always open). */
  poolStats(): { total: number; idle: number; waiting: number };
  close(): Promise<void>;
}

export function engineOf(url: string): Engine {
  return url.startsWith('postgres') ? 'postgres' : 'sqlite';
}

/** The file a `sqlite:<path>` URL names (`:memory:` for a throw-away database), or null for PostgreSQL. */
export function sqlitePathOf(url: string): string | null {
  return engineOf(url) === 'sqlite' ? url.slice('sqlite:'.length) : null;
}

export interface OpenOptions {
  poolSize?: number;
  /** SQLite's `synchronous` pragma (see the SQLITE_SYNCHRONOUS setting); `normal` unless given. */
  sqliteSynchronous?: 'normal' | 'full';
  /** Megabytes of SQLite's page cache (see the SQLITE_CACHE_MEGABYTES setting); 2 unless given. */
  sqliteCacheMegabytes?: number;
  /** PostgreSQL: prepare the statements worth preparing (see POSTGRES_PREPARED_STATEMENTS, prepared-statements.ts); on unless false. */
  postgresPreparedStatements?: boolean;
  /** Watches every statement (OpenTelemetry traces when OTEL_ENABLED); none unless given. */
  queryObserver?: QueryObserver;
}

export function openDatabase(url: string, options: OpenOptions = {}): Database {
  const engine = engineOf(url);
  const path = sqlitePathOf(url);
  // The PostgreSQL driver is loaded on the first query (Kysely takes a pool factory), so a
  // SQLite server never loads it.
  let pool: Pool | null = null;
  const observe = options.queryObserver;
  const db =
    path === null
      ? new Kysely<DB>({
          dialect: observed(
            new StrongroomPostgresDialect({
              pool: async () => {
                pool ??= await openPool(url, options.poolSize ?? 10);
                return options.postgresPreparedStatements === false ? pool : preparingPool(pool);
              },
            }),
            observe,
          ),
        })
      : openSqlite(path, { synchronous: options.sqliteSynchronous ?? 'normal', cacheMegabytes: options.sqliteCacheMegabytes ?? 2 }, observe);
  let closed = false;
  return {
    db,
    engine,
    poolStats: () => (pool ? { total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount } : { total: 1, idle: 0, waiting: 0 }),
    async ping() {
      await sql`select 1`.execute(db);
    },
    async close() {
      if (closed) return;
      closed = true;
      await db.destroy();
    },
  };
}

/** The dialect itself, or wrapped so that `observer` sees each statement. */
function observed(dialect: Dialect, observer: QueryObserver | undefined): Dialect {
  return observer ? new ObservedDialect(dialect, observer) : dialect;
}

function openSqlite(path: string, { synchronous, cacheMegabytes }: { synchronous: 'normal' | 'full'; cacheMegabytes: number }, observer: QueryObserver | undefined): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = openSqliteFile(path);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  // WAL with NORMAL survives a crash of the process; FULL also a power loss (SQLITE_SYNCHRONOUS).
  database.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  // Another instance migrating or writing holds the lock briefly; wait rather than fail.
  database.pragma('busy_timeout = 5000');
  // Pages kept in memory, up to SQLITE_CACHE_MEGABYTES (a negative size is in KiB). better-sqlite3
  // builds SQLite with 16 MB, which a process fills by reading a large vault once and keeps until
  // it closes the database; reads beyond it come from the operating system's file cache, and at
  // 2 MB neither sync nor item writes measured slower (docs/benchmarks.md).
  database.pragma(`cache_size = -${Math.round(cacheMegabytes * 1024)}`);
  // The log is copied back into the database (a checkpoint, with its disk syncs) once it holds
  // 10,000 pages rather than SQLite's default 1,000: a page written by many commits in between is
  // copied once, and the syncs come ten times less often (item writes ran about twice as fast,
  // see docs/benchmarks.md). After a checkpoint the log file is cut back to 64 MB.
  database.pragma('wal_autocheckpoint = 10000');
  database.pragma(`journal_size_limit = ${64 * 1024 * 1024}`);
  return new Kysely<DB>({ dialect: observed(new LockingSqliteDialect({ database: cachingStatements(database) }), observer) });
}

async function openPool(url: string, poolSize: number): Promise<Pool> {
  const { default: pg } = await import('pg');
  // Pipelining: a query handed to a connection is written at once, even while the one before it
  // is still running, so that a transaction's statements follow one sent ahead (sendAhead) and
  // its `begin` without waiting for their answers. Everything else awaits each query before the
  // next, as without it. In this mode pg refuses cursors (pg-cursor, so Kysely's streams) and the
  // `rows` option, and a `query_timeout` ends the whole connection rather than one query; none is
  // used.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, pipeline: true });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  return pool;
}
