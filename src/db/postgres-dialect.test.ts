import { PostgresIntrospector, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, TEST_ENGINE } from '../../test/support/test-server.js';
import { openDatabase, type Database } from './database.js';
import { migrateToLatest } from './migrate.js';

describe.skipIf(TEST_ENGINE !== 'postgres')('PostgreSQL: introspection of the current schema', () => {
  let ours: Database;
  let theirs: Database;
  let schema: string;

  beforeAll(async () => {
    ours = openDatabase((await freshDatabaseUrl()).url, { poolSize: 1 });
    theirs = openDatabase((await freshDatabaseUrl()).url, { poolSize: 1 });
    await migrateToLatest(ours);
    await sql`create table others (id integer primary key)`.execute(theirs.db);
    await sql`create view named_items as select id, organization_id from ciphers`.execute(ours.db);
    await sql`comment on column users.email is 'where mail goes'`.execute(ours.db);
    schema = (await sql<{ name: string }>`select current_schema() as name`.execute(ours.db)).rows[0]!.name;
  });
  afterAll(async () => {
    await ours.close();
    await theirs.close();
  });

  it("lists the current schema's tables and views as Kysely's own introspector does, and no other schema's", async () => {
    const everySchema = await new PostgresIntrospector(ours.db).getTables({ withInternalKyselyTables: true });
    expect(everySchema.some((table) => table.name === 'others')).toBe(true);
    const own = everySchema.filter((table) => table.schema === schema);
    expect(own.length).toBeGreaterThan(20);

    const listed = await ours.db.introspection.getTables({ withInternalKyselyTables: true });
    expect(listed).toEqual(own);
    expect(listed.find((table) => table.name === 'named_items')?.isView).toBe(true);
    expect(listed.find((table) => table.name === 'users')?.columns.find((column) => column.name === 'email')?.comment).toBe('where mail goes');
  });

  it("leaves Kysely's migration tables out unless asked, as Kysely does", async () => {
    const names = (await ours.db.introspection.getTables()).map((table) => table.name);
    expect(names).toContain('users');
    expect(names).not.toContain('kysely_migration');
    expect(names).not.toContain('kysely_migration_lock');
    expect((await ours.db.introspection.getMetadata()).tables.map((table) => table.name)).toEqual(names);
  });

  it('lists every schema, as the migrator checks that its own exists', async () => {
    const names = (await ours.db.introspection.getSchemas()).map((s) => s.name);
    expect(names).toContain(schema);
    expect(names).toContain((await sql<{ name: string }>`select current_schema() as name`.execute(theirs.db)).rows[0]!.name);
  });
});
