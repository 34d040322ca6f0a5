import type {
  CompiledQuery,
  DatabaseConnection,
  DatabaseIntrospector,
  Dialect,
  DialectAdapter,
  Driver,
  Kysely,
  QueryCompiler,
  QueryResult,
  TransactionSettings,
} from 'kysely';

/**
 * Something that watches every statement the database runs (OpenTelemetry traces, see
 * src/features/operations/tracing.ts). `run` executes the statement; the observer calls it once
 * and answers what it answers, or throws what it throws.
 */
export interface QueryObserver {
  query<T>(sql: string, run: () => Promise<T>): Promise<T>;
}

/**
 * A dialect whose connections report each statement to `observer`: every query Kysely sends,
 * inside transactions too (they run on a connection the driver hands out). Transaction control
 * (begin, commit, savepoints) goes to the driver's own connection, unobserved. Only used when an
 * observer is configured: without one the database opens the plain dialect, with no extra step.
 */
export class ObservedDialect implements Dialect {
  constructor(
    private readonly inner: Dialect,
    private readonly observer: QueryObserver,
  ) {}

  createDriver(): Driver {
    return new ObservedDriver(this.inner.createDriver(), this.observer);
  }

  createQueryCompiler(): QueryCompiler {
    return this.inner.createQueryCompiler();
  }

  createAdapter(): DialectAdapter {
    return this.inner.createAdapter();
  }

  // The introspector runs its queries through `db`, so they are observed like any others.
  createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return this.inner.createIntrospector(db);
  }
}

class ObservedConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly observer: QueryObserver,
  ) {}

  executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    return this.observer.query(compiledQuery.sql, () => this.inner.executeQuery<R>(compiledQuery));
  }

  streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(compiledQuery, chunkSize);
  }
}

class ObservedDriver implements Driver {
  /** One wrapper per driver connection, so a pooled connection keeps its wrapper. */
  readonly #wrappers = new WeakMap<DatabaseConnection, ObservedConnection>();

  constructor(
    private readonly inner: Driver,
    private readonly observer: QueryObserver,
  ) {}

  init(): Promise<void> {
    return this.inner.init();
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await this.inner.acquireConnection();
    let wrapper = this.#wrappers.get(connection);
    if (!wrapper) {
      wrapper = new ObservedConnection(connection, this.observer);
      this.#wrappers.set(connection, wrapper);
    }
    return wrapper;
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.inner.beginTransaction(unwrap(connection), settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.commitTransaction(unwrap(connection));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.inner.rollbackTransaction(unwrap(connection));
  }

  async savepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    if (!this.inner.savepoint) throw new Error('this database driver has no savepoints');
    await this.inner.savepoint(unwrap(connection), name, compileQuery);
  }

  async rollbackToSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    if (!this.inner.rollbackToSavepoint) throw new Error('this database driver has no savepoints');
    await this.inner.rollbackToSavepoint(unwrap(connection), name, compileQuery);
  }

  async releaseSavepoint(connection: DatabaseConnection, name: string, compileQuery: QueryCompiler['compileQuery']): Promise<void> {
    if (!this.inner.releaseSavepoint) throw new Error('this database driver has no savepoints');
    await this.inner.releaseSavepoint(unwrap(connection), name, compileQuery);
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(unwrap(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }
}

function unwrap(connection: DatabaseConnection): DatabaseConnection {
  return connection instanceof ObservedConnection ? connection.inner : connection;
}
