import { randomUUID } from 'node:crypto';
import type { Clock } from '../shared/clock.js';
import type { Db } from './database.js';

export interface Lease {
  /** Takes the lease, or keeps it, until `ttlMs` from now; false when another holder has it. */
  acquire(ttlMs: number): Promise<boolean>;
  release(): Promise<void>;
}

/**
 * A named lease in the `leases` table, the same on both engines: one row per name, taken by
 * an update that succeeds only for its holder or once the lease has expired. Of several
 * instances sharing a database, one holds it at a time; one that dies loses it at expiry.
 * Event retention and the integrations relay use it.
 */
export function createLease(db: Db, clock: Clock, name: string, holder: string = randomUUID()): Lease {
  return {
    async acquire(ttlMs) {
      const now = clock.now();
      const expires = new Date(now.getTime() + ttlMs).toISOString();
      await db
        .insertInto('leases')
        .values({ name, holder, expires_at: expires })
        .onConflict((oc) => oc.column('name').doNothing())
        .execute();
      const taken = await db
        .updateTable('leases')
        .set({ holder, expires_at: expires })
        .where('name', '=', name)
        .where((eb) => eb.or([eb('holder', '=', holder), eb('expires_at', '<', now.toISOString())]))
        .executeTakeFirst();
      return Number(taken.numUpdatedRows) === 1;
    },
    async release() {
      await db.updateTable('leases').set({ expires_at: new Date(0).toISOString() }).where('name', '=', name).where('holder', '=', holder).execute();
    },
  };
}

/** A job run now and then every interval in the background (see `everyInterval`). */
export interface BackgroundJob {
  /** Runs now and every interval until `stop`; failures go to `onError` and the next run tries again. */
  start(onError: (error: unknown) => void): void;
  /** Stops the timer, waits for a run in progress, and gives the lease back when one is named. */
  stop(): Promise<void>;
}

/** How a scheduled run ended: this instance did the work, another held the lease, or it failed. */
export type JobRunResult = 'ran' | 'skipped' | 'failed';

/**
 * The timer of the fleet's scheduled jobs (event retention, the Send purge, the file sweeper):
 * `runOnce` now and every `intervalMs`, never two runs at once on one instance; `runOnce` itself
 * takes the job's lease, so one instance of a fleet does the work, and answers null when another
 * instance held it. `onRun` hears how each run ended (the scheduled-job counter of /metrics).
 */
export function everyInterval(intervalMs: number, runOnce: () => Promise<unknown>, lease?: Lease, onRun?: (result: JobRunResult) => void): BackgroundJob {
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<unknown> | undefined;
  return {
    start(onError) {
      if (timer) return;
      const tick = () => {
        running ??= runOnce()
          .then(
            (result) => onRun?.(result === null ? 'skipped' : 'ran'),
            (error: unknown) => {
              onRun?.('failed');
              onError(error);
            },
          )
          .catch(onError)
          .finally(() => {
            running = undefined;
          });
      };
      timer = setInterval(tick, intervalMs);
      timer.unref();
      tick();
    },
    async stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      await running;
      await lease?.release().catch(() => undefined);
    },
  };
}
