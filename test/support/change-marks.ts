import { setTimeout as sleep } from 'node:timers/promises';
import { sql } from 'kysely';
import type { Database } from '../../src/db/database.js';
import { changeMark } from '../../src/features/vault/revisions.js';

/**
 * Waits until a sync's change mark (vault/revisions.ts, changeMark) is past every write made so
 * far. On PostgreSQL the mark is the oldest transaction still running in the whole cluster, and
 * other test files write to their own databases in the same cluster at the same time: a sync
 * taken while one of those is open marks below writes this test has finished, and reads them
 * again. Such re-reads are correct (a sync reads a superset of what changed); tests that count
 * what a sync reads wait here first. SQLite's mark is exact: nothing to wait for.
 */
export async function marksSettled(database: Database): Promise<void> {
  if (database.engine !== 'postgres') return;
  // A transaction id taken now: every write made so far has a smaller one.
  const { rows } = await sql<{ now: string }>`select pg_current_xact_id()::text as now`.execute(database.db);
  const now = Number(rows[0]!.now);
  const deadline = Date.now() + 10_000;
  while ((await changeMark(database.db, database.engine, 0)) < now) {
    if (Date.now() > deadline) throw new Error(`a transaction older than ${now} is still open after 10 s`);
    await sleep(5);
  }
}
