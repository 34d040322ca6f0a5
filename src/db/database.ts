import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { Kysely, PostgresDialect, sql, type Dialect } from 'kysely';
import pg from 'pg';
import { LockingSqliteDialect, SqliteBooleanPlugin, type Engine } from './dialect.js';
import { ObservedDialect, type QueryObserver } from './observed-dialect.js';
import type { DB } from './schema.js';

export type Db = Kysely<DB>;

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
  /** Watches every statement (OpenTelemetry traces when OTEL_ENABLED); none unless given. */
  queryObserver?: QueryObserver;
}

export function openDatabase(url: string, options: OpenOptions = {}): Database {
  const engine = engineOf(url);
  const path = sqlitePathOf(url);
  const pool = path === null ? openPool(url, options.poolSize ?? 10) : null;
  const observe = options.queryObserver;
  const db =
    pool !== null
      ? new Kysely<DB>({ dialect: observed(new PostgresDialect({ pool }), observe) })
      : openSqlite(path ?? ':memory:', options.sqliteSynchronous ?? 'normal', observe);
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

function openSqlite(path: string, synchronous: 'normal' | 'full', observer: QueryObserver | undefined): Db {
  if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
  const database = new SqliteDatabase(path);
  database.pragma('journal_mode = WAL');
  database.pragma('foreign_keys = ON');
  // WAL with NORMAL survives a crash of the process; FULL also a power loss (SQLITE_SYNCHRONOUS).
  database.pragma(`synchronous = ${synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  // Another instance migrating or writing holds the lock briefly; wait rather than fail.
  database.pragma('busy_timeout = 5000');
  return new Kysely<DB>({ dialect: observed(new LockingSqliteDialect({ database }), observer), plugins: [new SqliteBooleanPlugin()] });
}

function openPool(url: string, poolSize: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  // An idle client that loses its server must not crash the process; the next query reports it.
  pool.on('error', () => undefined);
  return pool;
}
