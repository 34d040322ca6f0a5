import {
  PostgresDialect,
  type CompiledQuery,
  type Compilable,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * Runs `query`, a write whose answer its caller does not need, in the executor's transaction
 * without waiting for the answer: the transaction's next statement, or its commit, waits for it
 * instead, and fails with its error if it failed (PostgreSQL has then given the transaction up),
 * so the transaction still fails whole. Best as a transaction's last writes: a statement after
 * it is correct but waits, as before.
 *
 * Why: on PostgreSQL a transaction holds the row locks of its updates until it commits. Awaited
 * as usual, a lock is held while the answer travels back to this process, waits its turn in an
 * event loop busy with other requests, and the commit travels out: a user's concurrent writes
 * all update the user's revision rows (see touchVault), so they queued behind each other for all
 * of that, about a millisecond each. Sent this way, the commit follows the statements on the
 * wire at once (the pool's connections pipeline, see openPool), the locks are held only while
 * PostgreSQL runs them, and a write's last statements (its item, its audit event, the bump) cost
 * one wait for their answers instead of one each. Item creates and updates at 10 connections went
 * from about 1,000 a second to about 1,900 and 1,650, and PostgreSQL's CPU time a create from
 * 0.75 to 0.3 ms (docs/benchmarks.md, thirteenth session).
 *
 * Outside a transaction, and on SQLite (one writer at a time, whose transactions of a turn
 * commit together anyway), the statement runs and is answered as any other.
 */
export async function writeWithCommit(executor: { executeQuery(query: CompiledQuery): Promise<unknown> }, query: Compilable): Promise<void> {
  const compiled = query.compile();
  withCommit.add(compiled);
  await executor.executeQuery(compiled);
}

/** The statements writeWithCommit hands to Kysely, as the connection receives them. */
const withCommit = new WeakSet<CompiledQuery>();

/**
 * Kysely's PostgreSQL dialect, whose transactions send the statements of writeWithCommit ahead
 * of their commit (see there). Everything else goes to Kysely's own driver unchanged.
 */
export class CommitPipeliningPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new CommitPipeliningDriver(super.createDriver());
  }
}

class CommitPipeliningConnection implements DatabaseConnection {
  /** Whether the connection is in a transaction the driver began. */
  inTransaction = false;
  /** The statements sent ahead of the commit, not yet answered to anyone. */
  #ahead: Promise<unknown> | undefined;

  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    if (this.inTransaction && withCommit.has(compiledQuery)) {
      // Sent at once (pg writes a query as it is handed over); its outcome is awaited later.
      const sent = this.inner.executeQuery(compiledQuery);
      const ahead = this.#ahead ? Promise.all([this.#ahead, sent]) : sent;
      // Awaited by the commit or the next statement, or dropped by a rollback.
      ahead.catch(() => undefined);
      this.#ahead = ahead;
      return { rows: [] };
    }
    // A statement sent ahead answers first, so that its failure is reported as its own.
    await this.takeAhead();
    return this.inner.executeQuery<R>(compiledQuery);
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }

  /** What was sent ahead and not yet awaited, now awaited by the caller. */
  takeAhead(): Promise<unknown> | undefined {
    const ahead = this.#ahead;
    this.#ahead = undefined;
    return ahead;
  }

  /** Forgets what was sent ahead: a rollback undoes it, whatever it answers. */
  dropAhead(): void {
    this.#ahead = undefined;
  }
}

class CommitPipeliningDriver implements Driver {
  /** One wrapper per pooled connection. */
  readonly #wrappers = new WeakMap<DatabaseConnection, CommitPipeliningConnection>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.#wrappers.get(connection);
    if (!wrapper) this.#wrappers.set(connection, (wrapper = new CommitPipeliningConnection(connection)));
    return wrapper;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const pipelining = connection as CommitPipeliningConnection;
    await this.inner.beginTransaction(pipelining.inner, settings);
    pipelining.inTransaction = true;
  }

  /**
   * The commit goes out at once, behind whatever was sent ahead of it. When that failed,
   * PostgreSQL has already given up the transaction (and answers the commit with a rollback),
   * so its error is the commit's.
   */
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const pipelining = connection as CommitPipeliningConnection;
    pipelining.inTransaction = false;
    const ahead = pipelining.takeAhead();
    const committed = this.inner.commitTransaction(pipelining.inner);
    if (ahead) {
      try {
        await ahead;
      } catch (error) {
        await committed.catch(() => undefined);
        throw error;
      }
    }
    await committed;
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const pipelining = connection as CommitPipeliningConnection;
    pipelining.inTransaction = false;
    pipelining.dropAhead();
    await this.inner.rollbackTransaction(pipelining.inner);
  }

  // Savepoints wait for what was sent ahead, as any other statement; a rollback to one undoes
  // what was sent after it.
  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const pipelining = connection as CommitPipeliningConnection;
    await pipelining.takeAhead();
    await this.inner.savepoint!(pipelining.inner, name, compileQuery);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const pipelining = connection as CommitPipeliningConnection;
    pipelining.dropAhead();
    await this.inner.rollbackToSavepoint!(pipelining.inner, name, compileQuery);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const pipelining = connection as CommitPipeliningConnection;
    await pipelining.takeAhead();
    await this.inner.releaseSavepoint!(pipelining.inner, name, compileQuery);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const pipelining = connection as CommitPipeliningConnection;
    pipelining.inTransaction = false;
    pipelining.dropAhead();
    return this.inner.releaseConnection(pipelining.inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
