import { sql, type Kysely } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, TEST_ENGINE } from '../../test/support/test-server.js';
import { openDatabase, type Database } from './database.js';
import { PREPARED_PER_CONNECTION } from './prepared-statements.js';

interface Notes {
  notes: { id: number; body: string };
}

/** The statements prepared on the connection (one: the pool has a single connection). */
async function preparedTexts(db: Kysely<Notes>): Promise<string[]> {
  const { rows } = await sql<{ statement: string }>`select statement from pg_prepared_statements`.execute(db);
  return rows.map((r) => r.statement);
}

describe.skipIf(TEST_ENGINE !== 'postgres')('PostgreSQL prepared statements', () => {
  let url: string;
  const opened: Database[] = [];
  const open = (prepared?: boolean) => {
    const database = openDatabase(url, { poolSize: 1, ...(prepared === undefined ? {} : { postgresPreparedStatements: prepared }) });
    opened.push(database);
    return database.db as unknown as Kysely<Notes>;
  };

  beforeAll(async () => {
    url = (await freshDatabaseUrl()).url;
    await sql`create table notes (id integer primary key, body text not null)`.execute(open(false));
  });
  afterAll(async () => {
    for (const database of opened) await database.close();
  });

  it('prepares a statement with parameters the second time a connection sends it, once, and runs it from then on', async () => {
    const db = open();
    for (let id = 1; id <= 3; id++) await db.insertInto('notes').values({ id, body: `note ${id}` }).execute();
    const read = () => db.selectFrom('notes').select(['id', 'body']).where('id', '=', 2).executeTakeFirst();
    expect(await read()).toEqual({ id: 2, body: 'note 2' });
    expect(await read()).toEqual({ id: 2, body: 'note 2' });
    const texts = await preparedTexts(db);
    expect(texts.filter((t) => t.startsWith('insert into "notes"'))).toHaveLength(1);
    expect(texts.filter((t) => t.startsWith('select "id", "body" from "notes"'))).toHaveLength(1);
    // Sent once: not worth a plan kept for the connection's life.
    await db.selectFrom('notes').select('body').where('id', '=', 3).execute();
    expect((await preparedTexts(db)).some((t) => t.startsWith('select "body" from "notes"'))).toBe(false);
  });

  it('leaves a statement reading * unprepared, so a column added by a newer release does not break it', async () => {
    const db = open();
    const star = () => db.selectFrom('notes').selectAll().where('id', '=', 1).executeTakeFirst();
    const named = () => db.selectFrom('notes').select(['id', 'body']).where('id', '=', 1).executeTakeFirst();
    expect(await star()).toEqual({ id: 1, body: 'note 1' });
    expect(await named()).toEqual({ id: 1, body: 'note 1' });
    // Another instance migrates meanwhile.
    await sql`alter table notes add column pinned boolean not null default false`.execute(open(false));
    expect(await star()).toEqual({ id: 1, body: 'note 1', pinned: false });
    expect(await named()).toEqual({ id: 1, body: 'note 1' });
    const texts = await preparedTexts(db);
    expect(texts.some((t) => t.startsWith('select * from "notes"'))).toBe(false);
    expect(texts.some((t) => t.startsWith('select "id", "body" from "notes"'))).toBe(true);
  });

  it(`prepares at most ${PREPARED_PER_CONNECTION} statements a connection and sends the rest unnamed`, async () => {
    const db = open();
    // Each list length is a statement of its own text.
    for (let length = 1; length <= PREPARED_PER_CONNECTION + 20; length++) {
      const ids = Array.from({ length }, (_, i) => i + 1);
      for (let time = 0; time < 2; time++) {
        const rows = await db.selectFrom('notes').select('id').where('id', 'in', ids).execute();
        expect(rows).toHaveLength(Math.min(length, 3));
      }
    }
    expect(await preparedTexts(db)).toHaveLength(PREPARED_PER_CONNECTION);
  });

  it('prepares nothing with POSTGRES_PREPARED_STATEMENTS=false', async () => {
    const db = open(false);
    for (let time = 0; time < 3; time++) await db.selectFrom('notes').select(['id', 'body']).where('id', '=', 3).execute();
    expect(await preparedTexts(db)).toEqual([]);
  });
});
