import type { CompiledQuery, DatabaseConnection, Driver, QueryResult, SqliteStatement as KyselySqliteStatement } from 'kysely';

/** A better-sqlite3 statement as the driver uses it: `readonly` says it writes nothing. */
export interface SqliteStatement extends KyselySqliteStatement {
  readonly readonly: boolean;
}

/** A better-sqlite3 database as the driver uses it (cachingStatements hands one out). */
export interface SqliteFile {
  prepare(text: string): SqliteStatement;
  close(): void;
  /** Whether a transaction is open: SQLite rolls one back by itself after some errors (a full disk, an I/O error). */
  readonly inTransaction: boolean;
}

/**
 * Kysely's driver for SQLite: one connection, lent to one transaction or one statement at a time,
 * whose transactions commit in groups.
 *
 * Each group begins `immediate`: it takes the database's write lock with its first statement
 * rather than its first write, so what its transactions read before writing cannot be changed by
 * another process in between (what `select … for update` guarantees on PostgreSQL), and none
 * fails halfway because another process wrote after it read (SQLITE_BUSY_SNAPSHOT).
 *
 * Group commit: a commit writes every page its transaction changed to the write-ahead log, about
 * two system calls a page, some 40 µs of an item write's 100 µs in SQLite; and the requests that
 * arrive together change many of the same pages (the user's row, the ends of the items' and the
 * events' tables and indexes). So the transactions that run in one turn of the event loop commit
 * together, right after it: at the first `setImmediate` after the group opens, once what was
 * already waiting for the connection has run (docs/benchmarks.md, "Item writes, twelfth session"):
 * - the first opens the group (`begin immediate`); each runs in a savepoint of it, so that its
 *   rollback undoes its own writes only;
 * - a query outside a transaction that only reads runs in the open group (it sees what the
 *   transactions before it wrote, as it would once they committed); any other statement, or a
 *   stream, commits the group first and runs on its own, as before;
 * - whatever ran in a group hears of its result only once the group has committed, and fails
 *   with the commit's error when it fails: no answer reports or shows a write that may yet be lost.
 * A transaction alone in its turn commits at the end of the turn, with no one else's writes.
 * Kysely's controlled transactions (`db.startTransaction()`) and savepoints are not supported:
 * their commit would not wait for the group's.
 */
export class GroupCommittingSqliteDriver implements Driver {
  readonly #database: SqliteFile;
  readonly #lock = new Lock();
  /** The open group: the database's transaction, holding the writes of the transactions released into it. */
  #group: Group | null = null;
  /** The connection's holder is a transaction of the open group (in its savepoint). */
  #inTransaction = false;
  /** The group the connection's holder ran in: its release waits for that group's commit. */
  #joined: Group | null = null;
  readonly #connection: DatabaseConnection = {
    executeQuery: async <R>(query: CompiledQuery) => this.#execute(query) as QueryResult<R>,
    streamQuery: <R>(query: CompiledQuery) => this.#stream(query) as AsyncIterableIterator<QueryResult<R>>,
  };

  constructor(database: SqliteFile) {
    this.#database = database;
  }

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    await this.#lock.acquire();
    return this.#connection;
  }

  async beginTransaction(): Promise<void> {
    if (!this.#group) {
      this.#run('begin immediate');
      this.#group = new Group();
      setImmediate(() => void this.#commitWhenFree());
    }
    this.#run('savepoint grouped');
    this.#inTransaction = true;
  }

  async commitTransaction(): Promise<void> {
    this.#run('release grouped');
    this.#inTransaction = false;
    this.#joined = this.#group;
  }

  async rollbackTransaction(): Promise<void> {
    this.#inTransaction = false;
    try {
      this.#run('rollback to grouped');
      this.#run('release grouped');
      // Its failure may rest on what the group wrote before it (a row that already exists): it
      // is told once the group has committed, or of the commit's failure.
      this.#joined = this.#group;
    } catch (error) {
      // SQLite has rolled back the whole group itself (its savepoint is gone): the transactions
      // released into it are lost, and fail.
      this.#abandon(error);
    }
  }

  async releaseConnection(): Promise<void> {
    const joined = this.#joined;
    this.#joined = null;
    this.#lock.release();
    if (joined) await joined.committed;
  }

  /** Commits the open group and closes the database (what asks for it later fails: it is closed). */
  async destroy(): Promise<void> {
    await this.#lock.acquire();
    try {
      this.#commit();
      this.#database.close();
    } finally {
      this.#lock.release();
    }
  }

  #execute(query: CompiledQuery): QueryResult<unknown> {
    const statement = this.#database.prepare(query.sql);
    this.#admit(statement, { streamed: false });
    try {
      if (statement.reader) return { rows: statement.all(query.parameters) };
      const { changes, lastInsertRowid } = statement.run(query.parameters);
      return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
    } catch (error) {
      if (this.#group && !this.#database.inTransaction) this.#abandon(error);
      throw error;
    }
  }

  async *#stream(query: CompiledQuery): AsyncIterableIterator<QueryResult<unknown>> {
    const statement = this.#database.prepare(query.sql);
    this.#admit(statement, { streamed: true });
    for (const row of statement.iterate(query.parameters)) yield { rows: [row] };
  }

  /**
   * Readies the group for `statement`. Outside a transaction, a query that reads joins the open
   * group; anything else commits it first, a stream too (its rows go out before a commit could
   * come). Inside one, nothing more runs once SQLite has rolled the group back after an error
   * (the group fails with the transaction's rollback): it would run on its own, in autocommit.
   */
  #admit(statement: SqliteStatement, { streamed }: { streamed: boolean }): void {
    if (this.#inTransaction) {
      if (!this.#database.inTransaction) throw new Error('The database rolled this transaction back after an error; nothing of it was written.');
    } else if (this.#group) {
      if (!streamed && statement.reader && statement.readonly) this.#joined = this.#group;
      else this.#commit();
    }
  }

  /** Commits the open group; the caller holds the connection. */
  #commit(): void {
    const group = this.#group;
    if (!group) return;
    this.#group = null;
    try {
      this.#run('commit');
      group.settle();
    } catch (error) {
      group.settle(error);
      this.#rollBackWhatIsLeft();
    }
  }

  async #commitWhenFree(): Promise<void> {
    await this.#lock.acquire();
    try {
      this.#commit();
    } finally {
      this.#lock.release();
    }
  }

  /** The open group is given up: what ran in it fails with `error`, and none of it is written. */
  #abandon(error: unknown): void {
    const group = this.#group;
    this.#group = null;
    group?.settle(new Error('The database rolled back a group of transactions after an error; none of them was written.', { cause: error }));
    this.#rollBackWhatIsLeft();
  }

  /** Ends the database's transaction of a failed group, if SQLite has not already. */
  #rollBackWhatIsLeft(): void {
    try {
      if (this.#database.inTransaction) this.#run('rollback');
    } catch {
      // Nothing more to do: the next `begin immediate` reports the connection's state.
    }
  }

  #run(text: string): void {
    this.#database.prepare(text).run([]);
  }
}

/** The transactions and reads of one database transaction, and its commit's outcome. */
class Group {
  readonly committed: Promise<void>;
  settle!: (error?: unknown) => void;

  constructor() {
    this.committed = new Promise<void>((resolve, reject) => {
      this.settle = (error) => (error === undefined ? resolve() : reject(error instanceof Error ? error : new Error('The commit failed.', { cause: error })));
    });
    // Each member hears of a failed commit through its own wait; a group left empty (its only
    // transaction rolled back) has no one to tell.
    this.committed.catch(() => undefined);
  }
}

/** A lock handed to its waiters in the order they asked for it. */
class Lock {
  #held = false;
  readonly #waiting: (() => void)[] = [];

  acquire(): Promise<void> {
    if (!this.#held) {
      this.#held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#held = false;
  }
}
