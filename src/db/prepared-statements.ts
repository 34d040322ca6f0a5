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
 * none) that name the columns they read. A statement with `*` is left unnamed: after a migration
 * adds a column, a prepared `select *` or `returning *` fails with "cached plan must not change
 * result type" on the instances still running the previous release, which a rolling upgrade
 * relies on not happening. Each connection prepares at most `PREPARED_PER_CONNECTION` statements
 * (their plans live in its server process); later new ones go unnamed, as before. The pool
 * closes idle connections, which frees theirs. A statement's name is its text's digest, so the
 * same text gets the same name on every connection.
 *
 * Off (`POSTGRES_PREPARED_STATEMENTS=false`) for a connection pooler in transaction mode that
 * does not carry prepared statements between its server connections (PgBouncer before 1.21).
 */
export const PREPARED_PER_CONNECTION = 200;

/** Kysely's pool, whose connections prepare the statements worth preparing (see above). */
export function preparingPool(pool: Pool): PostgresPool {
  const preparedBy = new WeakMap<PoolClient, Set<string>>();
  return {
    async connect(): Promise<PostgresPoolClient> {
      const client = await pool.connect();
      let prepared = preparedBy.get(client);
      if (!prepared) preparedBy.set(client, (prepared = new Set()));
      return { query: preparing(client, prepared), release: () => client.release() };
    },
    end: () => pool.end(),
  };
}

function preparing(client: PoolClient, prepared: Set<string>): PostgresPoolClient['query'] {
  function query<R>(text: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
  function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
  function query<R>(text: string | PostgresCursor<R>, parameters?: readonly unknown[]): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
    // A cursor (Kysely's streams) goes as it is.
    if (typeof text !== 'string') return client.query(text as unknown as Submittable) as unknown as PostgresCursor<R>;
    const values = [...(parameters ?? [])];
    const name = worthPreparing(text, values) ? statementName(text) : undefined;
    if (name && (prepared.has(name) || prepared.size < PREPARED_PER_CONNECTION)) {
      prepared.add(name);
      return client.query({ name, text, values }) as unknown as Promise<PostgresQueryResult<R>>;
    }
    return client.query(text, values) as unknown as Promise<PostgresQueryResult<R>>;
  }
  return query;
}

function worthPreparing(text: string, values: unknown[]): boolean {
  return values.length > 0 && !/[\s.]\*/.test(text);
}

/** 27 characters, within PostgreSQL's 63 for a name. */
function statementName(text: string): string {
  return `s${createHash('sha1').update(text).digest('base64url')}`;
}
