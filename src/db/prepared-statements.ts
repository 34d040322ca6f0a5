import { createHash } from 'node:crypto';
import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import type { Pool, PoolClient, Submittable } from 'pg';

/**
 * PostgreSQL parses, analyses and plans every statement that arrives unnamed, which is how
 * node-postgres sends a query with parameters. A named statement is parsed once per connection
 * and afterwards only bound and run: on an item create, the server's statements then cost
 * PostgreSQL about a fifth less CPU (docs/benchmarks.md, Vault, ninth session).
 *
 * Which statements are prepared: those with parameters (Kysely's; `begin`, `commit` and DDL have
 * none) that name the columns they read, from the second time a connection sends them (a
 * statement sent once, such as a migration's, is not worth a plan kept for the connection's life).
 * A statement with `*` is left unnamed: after a migration adds a column, a prepared `select *` or
 * `returning *` fails with "cached plan must not change result type" on the instances still
 * running the previous release, which a rolling upgrade relies on not happening. (A migration
 * that changes or renames a column breaks the older release's statements anyway, prepared or
 * not.) Each connection prepares at most `PREPARED_PER_CONNECTION` statements (their plans live in
 * its server process); later new ones go unnamed, as before. The pool closes idle connections,
 * which frees theirs. A statement's name is its text's digest, so the same text gets the same
 * name on every connection.
 *
 * Off (`POSTGRES_PREPARED_STATEMENTS=false`) for a connection pooler in transaction mode that
 * does not carry prepared statements between its server connections (PgBouncer before 1.21, or
 * later ones without `max_prepared_statements`).
 */
export const PREPARED_PER_CONNECTION = 200;

/** How many statements sent once a connection remembers, waiting for their second time. */
const SEEN_PER_CONNECTION = 1000;

/** Kysely's pool, whose connections prepare the statements worth preparing (see above). */
export function preparingPool(pool: Pool): PostgresPool {
  // One connection object for each of pg's clients, so that Kysely and the query observer, which
  // key their own state by it, find the same one at every checkout.
  const connections = new WeakMap<PoolClient, PostgresPoolClient>();
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let connection = connections.get(client);
      if (!connection) connections.set(client, (connection = { query: preparing(client), release: () => client.release() }));
      return connection;
    },
    end: () => pool.end(),
  };
}

function preparing(client: PoolClient): PostgresPoolClient['query'] {
  const prepared = new Set<string>();
  let seen = new Set<string>();
  /** Whether the statement named `name` goes prepared this time. */
  const prepare = (name: string): boolean => {
    if (prepared.has(name)) return true;
    if (!seen.has(name)) {
      if (seen.size >= SEEN_PER_CONNECTION) seen = new Set();
      seen.add(name);
      return false;
    }
    if (prepared.size >= PREPARED_PER_CONNECTION) return false;
    seen.delete(name);
    prepared.add(name);
    return true;
  };

  function query<R>(text: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(text: string | PostgresCursor<R>, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // A cursor (Kysely's streams) goes as it is.
    if (typeof text !== 'string') return client.query(text as unknown as Submittable) as unknown as PostgresCursor<R>;
    // Kysely hands over a fresh array of its own for each statement.
    const values = parameters as unknown[];
    const name = worthPreparing(text, values) ? statementName(text) : undefined;
    if (name && prepare(name)) return client.query({ name, text, values }) as unknown as Promise<PostgresQueryResult<R>>;
    return client.query(text, values) as unknown as Promise<PostgresQueryResult<R>>;
  }
  return query;
}

function worthPreparing(text: string, values: unknown[]): boolean {
  return values.length > 0 && !/[\s.]\*/.test(text);
}

/** 28 characters, within PostgreSQL's 63 for a name. */
function statementName(text: string): string {
  return `s${createHash('sha1').update(text).digest('base64url')}`;
}
