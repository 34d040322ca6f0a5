import SqliteDatabaseFile from 'better-sqlite3';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kysely, sql } from 'kysely';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cachingStatements, LockingSqliteDialect } from './dialect.js';
import type { SqliteFile } from './sqlite-driver.js';

interface Notes {
  notes: { id: number; text: string };
}

let dir: string;
let file: string;
const opened: { close(): unknown }[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sr-driver-'));
  file = join(dir, 'db.sqlite');
  const setup = new SqliteDatabaseFile(file);
  setup.pragma('journal_mode = WAL');
  setup.exec('create table notes (id integer primary key, text text not null)');
  setup.close();
});

afterEach(() => {
  for (const handle of opened.splice(0)) handle.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The driver over the test's file, recording the statements it runs; `failing` makes the next
 * run of a statement of that text throw, as SQLite would.
 */
function open() {
  const raw = new SqliteDatabaseFile(file);
  raw.pragma('busy_timeout = 1000');
  const ran: string[] = [];
  const failing = new Set<string>();
  const statements = cachingStatements(raw);
  const recording: SqliteFile = {
    close: () => statements.close(),
    get inTransaction() {
      return statements.inTransaction;
    },
    prepare(text) {
      const statement = statements.prepare(text);
      const note = () => {
        ran.push(text);
        if (failing.delete(text)) throw Object.assign(new Error(`${text} failed`), { code: 'SQLITE_IOERR' });
      };
      return {
        reader: statement.reader,
        readonly: statement.readonly,
        all: (parameters) => (note(), statement.all(parameters)),
        run: (parameters) => (note(), statement.run(parameters)),
        iterate: (parameters) => (note(), statement.iterate(parameters)),
      };
    },
  };
  const db = new Kysely<Notes>({ dialect: new LockingSqliteDialect({ database: recording }) });
  opened.push({ close: () => void db.destroy() });
  return { db, ran, failing, raw };
}

/** What another connection (another process) sees: only what is committed. */
function committed(): string[] {
  const other = new SqliteDatabaseFile(file, { readonly: true });
  try {
    return (other.prepare('select text from notes order by id').all() as { text: string }[]).map((row) => row.text);
  } finally {
    other.close();
  }
}

const insert = (db: Kysely<Notes>, id: number, text: string) => db.insertInto('notes').values({ id, text }).execute();

describe('the SQLite driver', () => {
  it('commits the transactions of one turn together, after the turn, and answers each only once committed', async () => {
    const { db, ran } = open();
    const answered: string[] = [];
    const transactions = ['a', 'b', 'c'].map((text, i) =>
      db
        .transaction()
        .execute(async (tx) => {
          await insert(tx, i + 1, text);
          return text;
        })
        .then((done) => {
          // Whoever hears of a transaction finds it committed.
          expect(committed()).toContain(done);
          answered.push(done);
        }),
    );
    await Promise.all(transactions);
    expect(answered.sort()).toEqual(['a', 'b', 'c']);
    expect(ran.filter((text) => text === 'begin immediate' || text === 'commit')).toEqual(['begin immediate', 'commit']);
    expect(committed()).toEqual(['a', 'b', 'c']);
  });

  it('rolls back a failed transaction alone; the others of its group commit', async () => {
    const { db } = open();
    const results = await Promise.allSettled([
      db.transaction().execute((tx) => insert(tx, 1, 'kept')),
      db.transaction().execute(async (tx) => {
        await insert(tx, 2, 'undone');
        throw new Error('changed its mind');
      }),
      db.transaction().execute((tx) => insert(tx, 3, 'kept too')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(committed()).toEqual(['kept', 'kept too']);
  });

  it('lets a read outside a transaction see the open group and answers it after the commit; a write outside one commits the group first', async () => {
    const { db, ran } = open();
    const order: string[] = [];
    const writing = db
      .transaction()
      .execute((tx) => insert(tx, 1, 'first'))
      .then(() => order.push('transaction'));
    const reading = db
      .selectFrom('notes')
      .select('text')
      .execute()
      .then((rows) => {
        expect(committed()).toEqual(['first']);
        order.push(`read ${rows.map((r) => r.text).join()}`);
      });
    await Promise.all([writing, reading]);
    expect(order).toEqual(['transaction', 'read first']);

    // A write outside a transaction, while a group is open: the group commits, then the write runs alone.
    ran.length = 0;
    await Promise.all([db.transaction().execute((tx) => insert(tx, 2, 'grouped')), insert(db, 3, 'alone')]);
    expect(ran.filter((text) => !text.startsWith('insert'))).toEqual(['begin immediate', 'savepoint grouped', 'release grouped', 'commit']);
    expect(ran.indexOf('commit')).toBeLessThan(ran.lastIndexOf(ran.find((text) => text.startsWith('insert')) ?? ''));
    expect(committed()).toEqual(['first', 'grouped', 'alone']);
  });

  it('fails every transaction and read of a group whose commit fails, writes none of it, and commits the next group', async () => {
    const { db, failing } = open();
    failing.add('commit');
    const results = await Promise.allSettled([
      db.transaction().execute((tx) => insert(tx, 1, 'lost')),
      db.transaction().execute((tx) => insert(tx, 2, 'lost too')),
      db.selectFrom('notes').selectAll().execute(),
      // Refused for a row of the group that is never written: told of the commit's failure instead.
      db.transaction().execute((tx) => insert(tx, 1, 'a duplicate of lost')),
    ]);
    expect(results.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'fulfilled'))).toEqual(['commit failed', 'commit failed', 'commit failed', 'commit failed']);
    expect(committed()).toEqual([]);
    await db.transaction().execute((tx) => insert(tx, 3, 'next'));
    expect(committed()).toEqual(['next']);
  });

  it('fails the whole group when SQLite rolls its transaction back, and runs nothing more of the transaction that saw it', async () => {
    const { db } = open();
    const results = await Promise.allSettled([
      db.transaction().execute((tx) => insert(tx, 1, 'lost with the group')),
      db.transaction().execute(async (tx) => {
        await insert(tx, 2, 'lost');
        // What SQLite does by itself after a full disk or an I/O error.
        await sql`rollback`.execute(tx);
        await insert(tx, 3, 'never written on its own');
      }),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(results[0]?.status === 'rejected' && (results[0].reason as Error).message).toMatch(/rolled back a group of transactions/);
    expect(results[1]?.status === 'rejected' && (results[1].reason as Error).message).toMatch(/rolled this transaction back/);
    expect(committed()).toEqual([]);
    await db.transaction().execute((tx) => insert(tx, 4, 'next'));
    expect(committed()).toEqual(['next']);
  });

  it('commits the open group when the database closes', async () => {
    const { db } = open();
    let closing: Promise<void> | undefined;
    // Closed in the turn of the transaction, before its group's commit would come.
    await db.transaction().execute(async (tx) => {
      await insert(tx, 1, 'before closing');
      closing = db.destroy();
    });
    await closing;
    expect(committed()).toEqual(['before closing']);
  });
});
