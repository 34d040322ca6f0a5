import {
  SqliteAdapter,
  SqliteDialect,
  SqliteQueryCompiler,
  sql,
  type DialectAdapter,
  type Driver,
  type QueryCompiler,
  type SelectModifierNode,
  type Kysely,
  type MigrationLockOptions,
} from 'kysely';
import { GroupCommittingSqliteDriver, type SqliteFile, type SqliteStatement } from './sqlite-driver.js';

/**
 * Everything that differs between the two engines lives here: column types, error codes and
 * value binding. Repositories and migrations stay engine-neutral by going through this module.
 */
export type Engine = 'sqlite' | 'postgres';

export interface ColumnTypes {
  /** Booleans: PostgreSQL boolean, SQLite integer 0/1 (read back with Boolean()). */
  bool: 'boolean' | 'integer';
  /** Timestamps are ISO-8601 UTC text on both engines, so they compare and sort alike. */
  timestamp: 'text';
  /** JSON documents (encrypted cipher payloads and the like) stored as text. */
  json: 'text';
  bigint: 'bigint' | 'integer';
}

export function columnTypes(engine: Engine): ColumnTypes {
  return engine === 'postgres'
    ? { bool: 'boolean', timestamp: 'text', json: 'text', bigint: 'bigint' }
    : { bool: 'integer', timestamp: 'text', json: 'text', bigint: 'integer' };
}

interface DbError {
  code?: unknown;
}

/** The engine an executor (a database, or one of its transactions) sends its statements to. */
export function engineOfExecutor(executor: Pick<Kysely<unknown>, 'getExecutor'>): Engine {
  return executor.getExecutor().adapter instanceof SqliteAdapter ? 'sqlite' : 'postgres';
}

export function isUniqueViolation(error: unknown): boolean {
  const code = (error as DbError | undefined)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** SQLite answers "busy" when another process holds the write lock. */
export function isBusy(error: unknown): boolean {
  const code = (error as DbError | undefined)?.code;
  return typeof code === 'string' && code.startsWith('SQLITE_BUSY');
}

/**
 * Kysely's SQLite adapter runs migrations outside a transaction and takes no lock, since one
 * process has one connection. Several processes on one file would then both see a migration
 * as pending and both apply it. This adapter runs them in one transaction (SQLite's DDL is
 * transactional) that starts by writing the lock row, so it holds the write lock throughout:
 * the others wait (busy timeout), then find nothing left to do.
 */
class LockingSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }

  override async acquireMigrationLock(db: Kysely<unknown>, options: MigrationLockOptions): Promise<void> {
    await sql`update ${sql.table(options.lockTable)} set is_locked = 1 where id = ${options.lockRowId}`.execute(db);
  }
}

/**
 * better-sqlite3 compiles a statement on every `prepare`, and Kysely prepares every query it
 * runs (about 7 % of an item write's time went there). This keeps the compiled statements of
 * the last STATEMENTS distinct SQL texts, so that each query shape is compiled once; the
 * connection runs one query at a time (GroupCommittingSqliteDriver holds a lock), so a statement is
 * never used by two queries at once. Statements with more than MAX_CACHED_PARAMETERS
 * parameters are kept apart, the last LARGE_STATEMENTS of them: a long `in (…)` list is a text
 * of its own for each length, and kept with the others such statements would push the
 * everyday ones out; among themselves they only push out each other, while a large statement
 * of a fixed shape run again and again (the audit log's multi-row inserts) stays compiled.
 * The statements handed out bind booleans as 1 and 0 (bindingBooleans).
 */
export function cachingStatements(database: SqliteFile): SqliteFile {
  const everyday = new RecentlyUsed(STATEMENTS);
  const large = new RecentlyUsed(LARGE_STATEMENTS);
  return {
    close: () => database.close(),
    get inTransaction() {
      return database.inTransaction;
    },
    prepare(text: string): SqliteStatement {
      const kept = everyday.take(text) ?? large.take(text);
      const statement = kept?.statement ?? bindingBooleans(database.prepare(text));
      const statements = kept?.from ?? (parameterCount(text) > MAX_CACHED_PARAMETERS ? large : everyday);
      statements.put(text, statement);
      return statement;
    },
  };
}

/**
 * better-sqlite3 cannot bind JavaScript booleans; the statement binds them as 1 and 0 (the
 * schema's booleans are integers on SQLite, see columnTypes). Done here, on the values alone,
 * rather than by a Kysely plugin that copied every query's whole tree to find them (about 7 % of
 * an item create's server CPU time, docs/benchmarks.md).
 */
function bindingBooleans(statement: SqliteStatement): SqliteStatement {
  return {
    reader: statement.reader,
    readonly: statement.readonly,
    all: (parameters) => statement.all(withoutBooleans(parameters)),
    run: (parameters) => statement.run(withoutBooleans(parameters)),
    iterate: (parameters) => statement.iterate(withoutBooleans(parameters)),
  };
}

function withoutBooleans(parameters: readonly unknown[]): readonly unknown[] {
  return parameters.some((value) => typeof value === 'boolean') ? parameters.map((value) => (typeof value === 'boolean' ? Number(value) : value)) : parameters;
}

/** Compiled statements by SQL text, the least recently used dropped beyond `limit`. */
class RecentlyUsed {
  readonly #statements = new Map<string, SqliteStatement>();
  constructor(readonly limit: number) {}

  /** The statement kept for `text`, taken out (put it back to mark it as most recently used). */
  take(text: string): { statement: SqliteStatement; from: RecentlyUsed } | undefined {
    const statement = this.#statements.get(text);
    if (!statement) return undefined;
    this.#statements.delete(text);
    return { statement, from: this };
  }

  put(text: string, statement: SqliteStatement): void {
    // Map order is insertion order: the first key is the least recently used.
    if (this.#statements.size >= this.limit) this.#statements.delete(this.#statements.keys().next().value as string);
    this.#statements.set(text, statement);
  }
}

/** Compiled statements kept per SQLite connection (see cachingStatements). */
const STATEMENTS = 500;
/** Statements with more parameters than this are kept apart from the others... */
const MAX_CACHED_PARAMETERS = 50;
/** ...the last this many of them. */
const LARGE_STATEMENTS = 16;

function parameterCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf('?'); at !== -1; at = text.indexOf('?', at + 1)) count++;
  return count;
}

/**
 * `for update` is left out on SQLite: a transaction holds the whole database from its start
 * (GroupCommittingSqliteDriver), so a row lock has nothing left to add, and SQLite has no such clause.
 */
class SqliteCompiler extends SqliteQueryCompiler {
  protected override visitSelectModifier(node: SelectModifierNode): void {
    if (node.modifier !== 'ForUpdate') super.visitSelectModifier(node);
  }
}

export class LockingSqliteDialect extends SqliteDialect {
  readonly #database: SqliteFile;

  constructor(config: { database: SqliteFile }) {
    super(config);
    this.#database = config.database;
  }

  override createAdapter(): DialectAdapter {
    return new LockingSqliteAdapter();
  }

  override createDriver(): Driver {
    return new GroupCommittingSqliteDriver(this.#database);
  }

  override createQueryCompiler(): QueryCompiler {
    return new SqliteCompiler();
  }
}
