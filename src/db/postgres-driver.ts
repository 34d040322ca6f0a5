import {
  type CompiledQuery,
  type Compilable,
  type DatabaseConnection,
  type Driver,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * Runs `query`, a statement whose answer its caller does not need (a write, or a row lock taken
 * for the statements after it), in the executor's transaction without waiting for the answer:
 * the transaction's next statement, or its commit, goes out right behind it and is answered only
 * once it has answered, failing with its error if it failed (PostgreSQL has then given the
 * transaction up, and the commit fails with that error even if the caller caught it on the way),
 * so the transaction still fails whole. The answer seen at once is empty (no rows, no count).
 * Statements of one transaction must not run concurrently (as with Kysely anyway).
 *
 * Why: on PostgreSQL a transaction holds the row locks of its updates until it commits. Awaited
 * as usual, a lock is held while the answer travels back to this process, waits its turn in an
 * event loop busy with other requests, and the commit travels out: a user's concurrent writes
 * all update the user's revision rows (see touchVault), so they queued behind each other for all
 * of that, about a millisecond each. Sent this way, the commit follows the statements on the
 * wire at once (the pool's connections pipeline, see openPool), the locks are held only while
 * PostgreSQL runs them, and a write's last statements (its item, its audit event, the bump) cost
 * one wait for their answers instead of one each. (A write of an organization item still bumps
 * the members' revisions after it, awaited as usual.) Side by side at 10 connections, item
 * creates went from about 950 a second to about 2,000 and updates from about 950 to about 1,300,
 * and PostgreSQL's CPU time a create from 0.8 to 0.25 ms (docs/benchmarks.md, thirteenth
 * session). A row lock sent this way (lockCipher) goes out with the statement that reads the row
 * after it, and `begin` with a transaction's first statement (see the driver): an item update
 * waits for three answers where it waited for five (fourteenth session). A trace shows such a
 * statement as answered at once; its time is in no statement's span (commits are not traced), or
 * in the next statement's when one follows.
 *
 * A statement with an object among its values is awaited as any other: node-postgres turns an
 * object into JSON as it sends it, which can fail before PostgreSQL sees the statement, and the
 * transaction would then commit without it. Other values (text, numbers, booleans, bigints,
 * null) cannot fail there. Outside a transaction, and on SQLite (one writer at a time, whose
 * transactions of a turn commit together anyway), the statement runs and is answered as any
 * other.
 */
export async function sendAhead(executor: { executeQuery(query: CompiledQuery): Promise<unknown> }, query: Compilable): Promise<void> {
  const compiled = query.compile();
  if (compiled.parameters.every(isPlainValue)) toSendAhead.add(compiled);
  await executor.executeQuery(compiled);
}

const PLAIN_VALUE_TYPES = new Set(['string', 'number', 'boolean', 'bigint']);

function isPlainValue(value: unknown): boolean {
  return value === null || PLAIN_VALUE_TYPES.has(typeof value);
}

/** The statements sendAhead hands to Kysely, as the connection receives them. */
const toSendAhead = new WeakSet<CompiledQuery>();

class PipeliningConnection implements DatabaseConnection {
  /** Whether the connection is in a transaction the driver began. */
  inTransaction = false;
  /** Settles (never fails) once every statement sent ahead in this transaction has answered. */
  #answered: Promise<unknown> = Promise.resolve();
  /** The first of them that failed: PostgreSQL has given the transaction up. */
  #failed: { error: unknown } | undefined;

  constructor(readonly inner: DatabaseConnection) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    // Outside a transaction nothing is ever sent ahead.
    if (!this.inTransaction) return this.inner.executeQuery<R>(compiledQuery);
    if (toSendAhead.has(compiledQuery)) {
      this.ahead(this.inner.executeQuery(compiledQuery));
      return { rows: [] };
    }
    // Sent at once too: PostgreSQL runs a connection's statements in order, so it runs after
    // what was sent ahead. That answers first, so that its failure is reported as its own (this
    // statement is then refused as part of a transaction given up). Both are awaited together:
    // node-postgres can refuse this one before sending it, sooner than the others answer.
    return afterBoth(this.answered(), this.inner.executeQuery<R>(compiledQuery));
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }

  /** Keeps for later the outcome of a statement sent ahead (pg writes a query as it is handed over). */
  ahead(sent: Promise<unknown>): void {
    const outcome = sent.then(
      () => undefined,
      (error: unknown) => void (this.#failed ??= { error }),
    );
    this.#answered = Promise.all([this.#answered, outcome]);
  }

  /** Waits for what was sent ahead to answer; fails with the first failure among it. */
  async answered(): Promise<void> {
    await this.#answered;
    if (this.#failed) throw this.#failed.error;
  }

  /** Waits for what was sent ahead to answer, whatever it answers (a rollback undoes it). */
  async settled(): Promise<void> {
    await this.#answered;
  }

  /** Forgets what was sent ahead and its failure: a new transaction, or a rollback that undid them. */
  reset(): void {
    this.#answered = Promise.resolve();
    this.#failed = undefined;
  }
}

/**
 * Waits for both (so that neither fails unhandled); fails with the first's failure, else the
 * second's; answers the second's value.
 */
async function afterBoth<T>(first: Promise<unknown>, second: Promise<T>): Promise<T> {
  const [before, own] = await Promise.allSettled([first, second]);
  if (before.status === 'rejected') throw before.reason;
  if (own.status === 'rejected') throw own.reason;
  return own.value;
}

/** The driver's own connection inside one of Kysely's (which only hands back what the driver gave it). */
function pipelining(connection: DatabaseConnection): PipeliningConnection {
  if (!(connection instanceof PipeliningConnection)) throw new Error('not a connection of PipeliningDriver');
  return connection;
}

/**
 * Kysely's PostgreSQL driver, whose transactions do not wait for answers they do not need: the
 * statements of sendAhead (see there) and `begin`. Every statement of a transaction goes out at
 * once, behind those; everything else goes to Kysely's own driver unchanged.
 */
export class PipeliningDriver implements Driver {
  /** One wrapper per pooled connection. */
  readonly #wrappers = new WeakMap<DatabaseConnection, PipeliningConnection>();

  constructor(private readonly inner: Driver) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.#wrappers.get(connection);
    if (!wrapper) this.#wrappers.set(connection, (wrapper = new PipeliningConnection(connection)));
    return wrapper;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    const own = pipelining(connection);
    own.reset();
    // Sent ahead: the transaction's first statement follows it at once, and fails with its error.
    // (A `begin` fails only on a lost connection, where the statements behind it fail too: Kysely
    // ends every transaction it begins before the connection goes back to the pool.)
    own.ahead(this.inner.beginTransaction(own.inner, settings));
    own.inTransaction = true;
  }

  /**
   * The commit goes out at once, behind whatever was sent ahead of it. When one of those failed,
   * PostgreSQL has already given up the transaction (and answers the commit with a rollback), so
   * its error is the commit's.
   */
  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    const own = pipelining(connection);
    own.inTransaction = false;
    try {
      await afterBoth(own.answered(), this.inner.commitTransaction(own.inner));
    } finally {
      own.reset();
    }
  }

  /** The rollback goes out at once too; what was sent ahead is undone, whatever it answers. */
  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    const own = pipelining(connection);
    own.inTransaction = false;
    try {
      await afterBoth(own.settled(), this.inner.rollbackTransaction(own.inner));
    } finally {
      own.reset();
    }
  }

  // Unlike other statements, savepoint statements go out only once what was sent ahead has
  // answered: a savepoint fails with its failure, and a rollback to one forgets (reset) only
  // what it undid, all sent after the savepoint.
  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const own = pipelining(connection);
    await own.answered();
    await this.inner.savepoint!(own.inner, name, compileQuery);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const own = pipelining(connection);
    await own.settled();
    await this.inner.rollbackToSavepoint!(own.inner, name, compileQuery);
    // Only now: should the rollback to the savepoint fail, the transaction stays given up.
    own.reset();
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    const own = pipelining(connection);
    await own.answered();
    await this.inner.releaseSavepoint!(own.inner, name, compileQuery);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    const own = pipelining(connection);
    own.inTransaction = false;
    own.reset();
    return this.inner.releaseConnection(own.inner);
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}
