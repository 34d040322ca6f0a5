import {
  DEFAULT_MIGRATION_LOCK_TABLE,
  DEFAULT_MIGRATION_TABLE,
  PostgresDialect,
  PostgresIntrospector,
  sql,
  type DatabaseIntrospector,
  type DatabaseMetadata,
  type DatabaseMetadataOptions,
  type Driver,
  type Kysely,
  type SchemaMetadata,
  type TableMetadata,
} from 'kysely';
import { PipeliningDriver } from './postgres-driver.js';

/**
 * Kysely's PostgreSQL dialect as Strongroom runs it: transactions that do not wait for answers
 * they do not need (PipeliningDriver, postgres-driver.ts), and introspection of the schema the
 * connections work in, not of every schema in the database (CurrentSchemaIntrospector).
 */
export class StrongroomPostgresDialect extends PostgresDialect {
  override createDriver(): Driver {
    return new PipeliningDriver(super.createDriver());
  }

  override createIntrospector(db: Kysely<unknown>): DatabaseIntrospector {
    return new CurrentSchemaIntrospector(db);
  }
}

interface ColumnRow {
  table: string;
  kind: string;
  schema: string;
  column: string;
  type: string;
  type_schema: string;
  not_null: boolean;
  has_default: boolean;
  sequence: string | null;
  comment: string | null;
}

/**
 * The tables of the current schema (`current_schema()`: the first of the connection's
 * search_path that exists), with their columns. Kysely's own introspector reads every column of
 * every table in every schema; its migrator does so twice at each start, only to see whether its
 * two tables exist. In a database shared with other schemas (other applications, or the test
 * suite's server per schema) that grew with each schema: a start's migration took about 0.2 s
 * beside no other schema and about 2 s beside 300 (docs/benchmarks.md, fourteenth session).
 */
class CurrentSchemaIntrospector implements DatabaseIntrospector {
  readonly #db: Kysely<unknown>;
  readonly #kysely: PostgresIntrospector;

  constructor(db: Kysely<unknown>) {
    this.#db = db;
    this.#kysely = new PostgresIntrospector(db);
  }

  /** Every schema, as Kysely lists them (the migrator checks that its schema exists). */
  getSchemas(): Promise<SchemaMetadata[]> {
    return this.#kysely.getSchemas();
  }

  async getTables(options: DatabaseMetadataOptions = { withInternalKyselyTables: false }): Promise<TableMetadata[]> {
    const { rows } = await sql<ColumnRow>`
      select c.relname as table, c.relkind as kind, ns.nspname as schema, a.attname as column,
        t.typname as type, tns.nspname as type_schema, a.attnotnull as not_null, a.atthasdef as has_default,
        pg_get_serial_sequence(quote_ident(ns.nspname) || '.' || quote_ident(c.relname), a.attname) as sequence,
        col_description(c.oid, a.attnum) as comment
      from pg_catalog.pg_class c
      join pg_catalog.pg_namespace ns on ns.oid = c.relnamespace
      join pg_catalog.pg_attribute a on a.attrelid = c.oid
      join pg_catalog.pg_type t on t.oid = a.atttypid
      join pg_catalog.pg_namespace tns on tns.oid = t.typnamespace
      where ns.nspname = current_schema() and c.relkind in ('r', 'v', 'p') and a.attnum > 0 and not a.attisdropped
      order by c.relname, a.attnum`.execute(this.#db);
    const internal = new Set(options.withInternalKyselyTables ? [] : [DEFAULT_MIGRATION_TABLE, DEFAULT_MIGRATION_LOCK_TABLE]);
    const tables = new Map<string, TableMetadata>();
    for (const row of rows) {
      if (internal.has(row.table)) continue;
      let table = tables.get(row.table);
      if (!table) tables.set(row.table, (table = { name: row.table, schema: row.schema, isView: row.kind === 'v', columns: [] }));
      table.columns.push({
        name: row.column,
        dataType: row.type,
        dataTypeSchema: row.type_schema,
        isNullable: !row.not_null,
        hasDefaultValue: row.has_default,
        isAutoIncrementing: row.sequence !== null,
        ...(row.comment === null ? {} : { comment: row.comment }),
      });
    }
    return [...tables.values()];
  }

  async getMetadata(options?: DatabaseMetadataOptions): Promise<DatabaseMetadata> {
    return { tables: await this.getTables(options) };
  }
}
