import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { createLease, everyInterval, type Lease, type JobRunResult } from '../../db/leases.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Rows deleted per statement: short transactions, so writers of new events never wait long. */
const PRUNE_BATCH = 5000;
const LEASE = 'event-retention';

export interface PruneResult {
  events: number;
  readSets: number;
}

/**
 * Event retention: with `days` > 0, events older than that many days are deleted, and the read
 * sets (see read-sets.ts) no remaining event names. Runs every `intervalMs` on each instance;
 * the `event-retention` lease lets one instance of a fleet prune at a time. Stored events are
 * never changed, and no route deletes them: this is the only way they go.
 */
export function createEventRetention({
  db,
  clock,
  days,
  intervalMs = 60 * 60 * 1000,
  lease = createLease(db, clock, LEASE),
  onRun,
}: {
  db: Db;
  clock: Clock;
  days: number;
  intervalMs?: number;
  lease?: Lease;
  /** Told how each run ended: pruned (held the lease), skipped or failed. */
  onRun?: (result: JobRunResult) => void;
}) {
  async function pruneEvents(cutoff: string): Promise<number> {
    let total = 0;
    for (;;) {
      // Old events are mostly the first written: walk the primary key from the start (there is no date index, see 0012).
      const batch = db.selectFrom('events').select('seq').where('date', '<', cutoff).orderBy('seq').limit(PRUNE_BATCH);
      const deleted = await db.deleteFrom('events').where('seq', 'in', batch).executeTakeFirst();
      const n = Number(deleted.numDeletedRows);
      total += n;
      if (n < PRUNE_BATCH) return total;
    }
  }

  async function pruneReadSets(cutoff: string): Promise<number> {
    let total = 0;
    for (;;) {
      const orphans = (
        await db
          .selectFrom('secret_read_sets as s')
          .select('s.id')
          .where('s.creation_date', '<', cutoff)
          .where((eb) => eb.not(eb.exists(eb.selectFrom('events as e').select('e.seq').whereRef('e.read_set_id', '=', 's.id'))))
          .limit(PRUNE_BATCH)
          .execute()
      ).map((row) => row.id);
      if (orphans.length === 0) return total;
      await db.transaction().execute(async (tx) => {
        await tx.deleteFrom('secret_read_set_members').where('read_set_id', 'in', orphans).execute();
        await tx.deleteFrom('secret_read_sets').where('id', 'in', orphans).execute();
      });
      total += orphans.length;
      if (orphans.length < PRUNE_BATCH) return total;
    }
  }

  const retention = {
    /** Prunes once if this instance holds the lease; null when another instance does, or retention is off. */
    async pruneOnce(): Promise<PruneResult | null> {
      if (days <= 0) return null;
      if (!(await lease.acquire(Math.max(intervalMs, 10 * 60 * 1000)))) return null;
      const cutoff = new Date(clock.now().getTime() - days * DAY_MS).toISOString();
      const events = await pruneEvents(cutoff);
      const readSets = await pruneReadSets(cutoff);
      return { events, readSets };
    },
    start(onError: (error: unknown) => void): void {
      if (days > 0) job.start(onError);
    },

    stop: () => job.stop(),
  };
  const job = everyInterval(intervalMs, () => retention.pruneOnce(), lease, onRun);
  return retention;
}

export type EventRetention = ReturnType<typeof createEventRetention>;
