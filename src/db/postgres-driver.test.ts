import { CompiledQuery, sql, type Compilable, type Kysely, type Transaction } from 'kysely';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { freshDatabaseUrl, TEST_ENGINE } from '../../test/support/test-server.js';
import { openDatabase, type Database } from './database.js';
import { sendAhead } from './postgres-driver.js';

interface Tables {
  counters: { id: number; value: number };
  entries: { id: number };
}

/** A statement of our own text, as sendAhead takes a query builder. */
const statement = (text: string): Compilable => ({ compile: () => CompiledQuery.raw(text) });

/** Blocks this thread's event loop, as a process busy with other requests does, for `ms` (without spinning a core). */
function blocked(ms: number): number {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
  return Date.now();
}

describe.skipIf(TEST_ENGINE !== 'postgres')('PostgreSQL: statements sent ahead (sendAhead)', () => {
  let url: string;
  const opened: Database[] = [];
  const open = () => {
    const database = openDatabase(url, { poolSize: 2 });
    opened.push(database);
    return database.db as unknown as Kysely<Tables>;
  };
  let db: Kysely<Tables>;
  const entries = async () => (await db.selectFrom('entries').select('id').orderBy('id').execute()).map((r) => r.id);

  beforeAll(async () => {
    url = (await freshDatabaseUrl()).url;
    db = open();
    await sql`create table counters (id integer primary key, value integer not null)`.execute(db);
    await sql`create table entries (id integer primary key)`.execute(db);
  });
  beforeEach(async () => {
    await db.deleteFrom('entries').execute();
    await db.deleteFrom('counters').execute();
    await db.insertInto('counters').values({ id: 1, value: 0 }).execute();
  });
  afterAll(async () => {
    for (const database of opened) await database.close();
  });

  it('commits the statement with its transaction, without the transaction waiting for its answer', async () => {
    let callTook = Infinity;
    const started = Date.now();
    await db.transaction().execute(async (tx) => {
      await tx.insertInto('entries').values({ id: 1 }).execute();
      const called = Date.now();
      await sendAhead(tx, statement('insert into entries select 2 from pg_sleep(1)'));
      callTook = Date.now() - called;
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(callTook).toBeLessThan(500);
    expect(await entries()).toEqual([1, 2]);
  });

  /** Until a statement like `pattern` of another connection waits for a lock. */
  async function waitingForLock(watcher: Kysely<Tables>, pattern: string): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const { rows } = await sql<{ waiting: string }>`
        select count(*) as waiting from pg_stat_activity
        where datname = current_database() and wait_event_type = 'Lock' and query like ${pattern}`.execute(watcher);
      if (Number(rows[0]!.waiting) > 0) return;
      if (Date.now() > deadline) throw new Error(`no statement like ${pattern} ever waited for a lock`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  it('lets go of the row locks once PostgreSQL has run it and the commit, even while this process is busy', async () => {
    const other = open();
    const watcher = open();
    let blockEnded = 0;
    let waiter: Promise<{ rows: { at: number }[] }> | undefined;
    await db.transaction().execute(async (tx) => {
      await tx.updateTable('counters').set({ value: sql`value + 1` }).where('id', '=', 1).execute();
      // Another transaction waits for the row's lock...
      waiter = sql<{ at: number }>`update counters set value = value + 10 where id = 1 returning extract(epoch from clock_timestamp()) * 1000 as at`.execute(
        other,
      );
      await waitingForLock(watcher, '%value + 10%');
      // ...while this process is blocked for a second from the next turn of its event loop,
      // before the answer to the last statement (50 ms in PostgreSQL) can reach it.
      setImmediate(() => (blockEnded = blocked(1000)));
      await sendAhead(tx, statement('insert into entries select 9 from pg_sleep(0.05)'));
    });
    const { rows } = await waiter!;
    expect(Number(rows[0]!.at)).toBeLessThan(blockEnded);
    expect((await db.selectFrom('counters').select('value').where('id', '=', 1).executeTakeFirstOrThrow()).value).toBe(11);
    expect(await entries()).toEqual([9]);
  });

  // PostgreSQL's clock, in milliseconds since the epoch, when it runs the statement.
  const ranAt = async (executor: Kysely<Tables>) =>
    Number((await sql<{ at: number }>`select extract(epoch from clock_timestamp()) * 1000 as at`.execute(executor)).rows[0]!.at);

  it('sends the next statement at once, behind one sent ahead, without waiting for its answer', async () => {
    let blockEnded = 0;
    const at = await db.transaction().execute(async (tx) => {
      await tx.insertInto('entries').values({ id: 1 }).execute();
      // This process is blocked from the next turn of its event loop, before the answer to the
      // statement sent ahead (50 ms in PostgreSQL) can reach it.
      setImmediate(() => (blockEnded = blocked(1000)));
      await sendAhead(tx, statement('select pg_sleep(0.05)'));
      return ranAt(tx);
    });
    expect(at).toBeLessThan(blockEnded);
  });

  it('sends the read after a row lock sent ahead with it; PostgreSQL runs it once the lock is granted, so it reads what the lock waited for', async () => {
    const holder = open();
    const watcher = open();
    let blockEnded = 0;
    let read: Promise<{ value: number; at: number }> | undefined;
    await holder.transaction().execute(async (tx) => {
      await tx.updateTable('counters').set({ value: 1 }).where('id', '=', 1).execute();
      read = db.transaction().execute(async (reader) => {
        await sendAhead(reader, reader.selectFrom('counters').select('id').where('id', '=', 1).forUpdate());
        return reader
          .selectFrom('counters')
          .select(['value', sql<number>`extract(epoch from clock_timestamp()) * 1000`.as('at')])
          .where('id', '=', 1)
          .executeTakeFirstOrThrow();
      });
      await waitingForLock(watcher, '%for update%');
      // The holder's commit goes out before this process is blocked, the lock's answer after.
      setImmediate(() => (blockEnded = blocked(1000)));
    });
    const { value, at } = await read!;
    expect(value).toBe(1);
    expect(Number(at)).toBeLessThan(blockEnded);
  });

  it("sends begin with the transaction's first statement", async () => {
    let blockEnded = 0;
    setImmediate(() => (blockEnded = blocked(1000)));
    const at = await db.transaction().execute((tx) => ranAt(tx));
    expect(at).toBeLessThan(blockEnded);
  });

  const nothingMore = async () => undefined;
  const caughtRead = (tx: Transaction<Tables>) =>
    tx
      .selectFrom('entries')
      .select('id')
      .execute()
      .catch(() => undefined);
  it.each([
    ['when it fails', nothingMore],
    ['even when the caller caught it at the next statement', caughtRead],
  ])("fails the commit with the statement's own error %s, and writes nothing", async (_, then) => {
    await db.insertInto('entries').values({ id: 7 }).execute();
    const failing = db.transaction().execute(async (tx) => {
      await tx.updateTable('counters').set({ value: 5 }).where('id', '=', 1).execute();
      await sendAhead(tx, tx.insertInto('entries').values({ id: 7 }));
      await then(tx);
    });
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    expect((await db.selectFrom('counters').select('value').executeTakeFirstOrThrow()).value).toBe(0);
    // The connection is fit for the next transaction.
    await db.transaction().execute(async (tx) => {
      await sendAhead(tx, tx.insertInto('entries').values({ id: 8 }));
    });
    expect(await entries()).toEqual([7, 8]);
  });

  it("answers a later statement of the transaction only after it, with the statement's error when it failed", async () => {
    const seen = await db.transaction().execute(async (tx) => {
      await sendAhead(tx, tx.insertInto('entries').values({ id: 3 }));
      return tx.selectFrom('entries').select('id').execute();
    });
    expect(seen).toEqual([{ id: 3 }]);
    const failing = db.transaction().execute(async (tx) => {
      await sendAhead(tx, tx.insertInto('entries').values({ id: 3 }));
      await tx.insertInto('entries').values({ id: 4 }).execute();
    });
    // The duplicate, not "current transaction is aborted" (25P02) from the statement after it.
    await expect(failing).rejects.toMatchObject({ code: '23505' });
    expect(await entries()).toEqual([3]);
  });

  it('awaits a statement with an object among its values, whose sending can fail before PostgreSQL sees it', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const failing = db.transaction().execute(async (tx) => {
      await tx.insertInto('entries').values({ id: 10 }).execute();
      await sendAhead(tx, { compile: () => CompiledQuery.raw('update counters set value = value + 1 where id = $1', [circular]) });
    });
    await expect(failing).rejects.toThrow(/circular/i);
    expect(await entries()).toEqual([]);
  });

  it('fails the transaction with the error of a statement refused before it was sent, first in its transaction', async () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    const failing = db.transaction().execute(async (tx) => {
      await tx.executeQuery(CompiledQuery.raw('update counters set value = value + 1 where id = $1', [circular]));
    });
    await expect(failing).rejects.toThrow(/circular/i);
    expect((await db.selectFrom('counters').select('value').executeTakeFirstOrThrow()).value).toBe(0);
  });

  it('forgets what a rollback to a savepoint undid, and commits the rest', async () => {
    const trx = await db.startTransaction().execute();
    await sendAhead(trx, trx.insertInto('entries').values({ id: 11 }));
    const inner = await trx.savepoint('before_duplicate').execute();
    await sendAhead(inner, inner.insertInto('entries').values({ id: 11 }));
    // Refused only because the transaction was given up; its answer may come after the first's.
    await sendAhead(inner, inner.insertInto('entries').values({ id: 13 }));
    await inner.rollbackToSavepoint('before_duplicate').execute();
    await sendAhead(trx, trx.insertInto('entries').values({ id: 12 }));
    await trx.commit().execute();
    expect(await entries()).toEqual([11, 12]);
  });

  it('is undone with the transaction when it rolls back for another reason', async () => {
    const failing = db.transaction().execute(async (tx) => {
      await sendAhead(tx, tx.insertInto('entries').values({ id: 5 }));
      throw new Error('changed my mind');
    });
    await expect(failing).rejects.toThrow('changed my mind');
    expect(await entries()).toEqual([]);
  });

  it('runs and answers as any other statement outside a transaction', async () => {
    await sendAhead(db, db.insertInto('entries').values({ id: 6 }));
    expect(await entries()).toEqual([6]);
    await expect(sendAhead(db, db.insertInto('entries').values({ id: 6 }))).rejects.toMatchObject({ code: '23505' });
  });
});
