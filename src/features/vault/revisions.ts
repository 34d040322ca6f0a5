import { sql } from 'kysely';
import { engineOfExecutor, type Engine } from '../../db/dialect.js';
import { sendAhead } from '../../db/postgres-driver.js';
import { touchAccountRevision } from '../../platform/auth/users.repository.js';
import type { Executor } from '../../db/database.js';

/**
 * Marks a change to what a user's sync carries, in the change's transaction: the account
 * revision date (the clients sync when it moves) and the vault revision, an exact counter
 * that lets sync reuse its last answer while nothing changed (see sync-cache.ts). Every
 * write to a user's folders, items or item settings goes through here; features that change
 * what a user sees (organization items, collections) must call it for each user concerned, as
 * the revision date is what tells their clients to sync. (Sync itself finds changed
 * organization items by their stamps, migration 0021, but still reads the revision for the
 * personal ones.)
 *
 * Call it after the transaction's other writes and its audit event (only reads of what it wrote
 * may follow): on PostgreSQL the two updates lock the user's rows until commit, so a user's
 * concurrent writes queue behind each other only for the bump and the commit. There the two go
 * as one statement (the account update a data-modifying `with`), one round trip less in the
 * lock's hold, and that statement is sent ahead (sendAhead) with the commit right behind it, so
 * the lock is not held while this process gets round to committing; SQLite has one writer at a
 * time anyway and takes no such `with`.
 */
export async function touchVault(executor: Executor, userId: string, date: string): Promise<void> {
  const nextRevision = sql<number>`vault_revisions.revision + 1`;
  if (engineOfExecutor(executor) === 'postgres') {
    // The upsert reads the account update's row, so PostgreSQL runs the update first: the
    // user's row is locked before the revision's, in the order of every other transaction that
    // updates the user's row and then calls this (the storage of attachments). A `with` the
    // statement does not read runs after it, which would take the two locks the other way
    // round and let two such transactions deadlock (revisions.test.ts).
    await sendAhead(
      executor,
      executor
        .with('account', (db) => db.updateTable('users').set({ account_revision_date: date }).where('id', '=', userId).returning('id'))
        .insertInto('vault_revisions')
        .columns(['user_id', 'revision'])
        .expression((eb) => eb.selectFrom('account').select(['account.id', sql<number>`1`.as('revision')]))
        .onConflict((oc) => oc.column('user_id').doUpdateSet({ revision: nextRevision })),
    );
    return;
  }
  await touchAccountRevision(executor, userId, date);
  await executor
    .insertInto('vault_revisions')
    .values({ user_id: userId, revision: 1 })
    .onConflict((oc) => oc.column('user_id').doUpdateSet({ revision: nextRevision }))
    .execute();
}

export async function vaultRevision(executor: Executor, userId: string): Promise<number> {
  const row = await executor.selectFrom('vault_revisions').select('revision').where('user_id', '=', userId).executeTakeFirst();
  return row ? Number(row.revision) : 0;
}

/**
 * The mark a sync takes before reading a user's personal items: a write committing later
 * stamps its rows' `change` above it (migration 0020), so rows stamped at or below it are all
 * in what the sync reads next. SQLite: the vault revision the sync read first (writers are
 * serialised, and each stamps one more than the revision it finds). PostgreSQL: the oldest
 * transaction still running, less one (rows are stamped with their transaction's id).
 */
export async function changeMark(executor: Executor, engine: Engine, revision: number): Promise<number> {
  if (engine === 'sqlite') return revision;
  const { rows } = await sql<{ mark: string }>`select pg_snapshot_xmin(pg_current_snapshot())::text as mark`.execute(executor);
  return Number(rows[0]!.mark) - 1;
}

/**
 * The marks a sync of a vault with organization collections takes before reading anything:
 * `personal` as changeMark (personal items and the user's settings rows are stamped from the
 * user's vault revision on SQLite), `shared` for organization items, their collection
 * assignments and removals (migration 0021). PostgreSQL: both are the one mark of changeMark.
 * SQLite: `shared` is the stamp counter, which every write of an organization item moves to
 * its stamp; a write committing later stamps above it.
 */
export async function changeMarks(executor: Executor, engine: Engine, revision: number): Promise<{ personal: number; shared: number }> {
  if (engine === 'postgres') {
    const mark = await changeMark(executor, engine, revision);
    return { personal: mark, shared: mark };
  }
  const row = await executor.selectFrom('change_clock').select('value').where('id', '=', 0).executeTakeFirst();
  return { personal: revision, shared: Number(row?.value ?? 0) };
}
