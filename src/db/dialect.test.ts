import SqliteDatabaseFile from 'better-sqlite3';
import { Kysely, sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { cachingStatements, LockingSqliteDialect } from './dialect.js';
import type { SqliteFile } from './sqlite-driver.js';

/** A database whose `prepare` answers a new statement object each time, counting them. */
function fakeDatabase() {
  let prepared = 0;
  const database: SqliteFile = {
    close: () => undefined,
    inTransaction: false,
    prepare: () => {
      prepared++;
      return { reader: false, readonly: false, all: () => [], iterate: () => [][Symbol.iterator](), run: () => ({ changes: 0, lastInsertRowid: 0 }) };
    },
  };
  return { database, prepared: () => prepared };
}

const select = (n: number) => `select * from t where id in (${Array.from({ length: n }, () => '?').join(', ')})`;

describe('cachingStatements', () => {
  it('compiles each text once and answers the same statement for it again', () => {
    const { database, prepared } = fakeDatabase();
    const cached = cachingStatements(database);
    const first = cached.prepare('select 1 where ? = ?');
    expect(cached.prepare('select 1 where ? = ?')).toBe(first);
    expect(prepared()).toBe(1);
  });

  it('keeps a statement of many parameters that is run again (a multi-row insert)', () => {
    const { database, prepared } = fakeDatabase();
    const cached = cachingStatements(database);
    const insert = `insert into t (a, b) values ${Array.from({ length: 100 }, () => '(?, ?)').join(', ')}`;
    const first = cached.prepare(insert);
    expect(cached.prepare(insert)).toBe(first);
    expect(prepared()).toBe(1);
  });

  it('does not let statements of many parameters push the everyday ones out', () => {
    const { database, prepared } = fakeDatabase();
    const cached = cachingStatements(database);
    const everyday = cached.prepare(select(2));
    // Long `in` lists of a thousand lengths: more than either cache holds.
    for (let n = 51; n < 1051; n++) cached.prepare(select(n));
    const before = prepared();
    expect(cached.prepare(select(2))).toBe(everyday);
    expect(prepared()).toBe(before);
    // The oldest long lists are gone: compiled again.
    cached.prepare(select(51));
    expect(prepared()).toBe(before + 1);
  });
});

describe('the statements handed to Kysely', () => {
  it('bind booleans as 1 and 0, which better-sqlite3 refuses, in values, conditions and raw SQL alike', async () => {
    const db = new Kysely<{ flags: { id: number; on: number | boolean } }>({ dialect: new LockingSqliteDialect({ database: cachingStatements(new SqliteDatabaseFile(':memory:')) }) });
    try {
      await sql`create table flags (id integer primary key, "on" integer not null)`.execute(db);
      await db.insertInto('flags').values([{ id: 1, on: true }, { id: 2, on: false }]).execute();
      await db.updateTable('flags').set({ on: true }).where('id', '=', 2).where('on', '=', false).execute();
      await sql`insert into flags (id, "on") values (${3}, ${false})`.execute(db);
      expect(await db.selectFrom('flags').selectAll().orderBy('id').execute()).toEqual([
        { id: 1, on: 1 },
        { id: 2, on: 1 },
        { id: 3, on: 0 },
      ]);
      expect(await db.selectFrom('flags').select('id').where('on', '=', true).orderBy('id').execute()).toEqual([{ id: 1 }, { id: 2 }]);
    } finally {
      await db.destroy();
    }
  });
});
