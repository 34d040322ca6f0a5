import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { createLease, everyInterval, type Lease, type JobRunResult } from '../../db/leases.js';
import { releaseStorage } from '../../platform/storage/quota.js';
import type { FileStore } from '../../platform/storage/file-store.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { deleteSend, sendsToPurge } from './sends.repository.js';
import { parseSendData } from './sends.schemas.js';
import { sendPush } from './sends.service.js';
import { touchAccountRevision } from '../../platform/auth/users.repository.js';
import { sendFolder } from '../../platform/storage/store-layout.js';

const BATCH = 500;
const LEASE = 'send-purge';

/**
 * Purges Sends past their deletion date, with their files, every `intervalMs`; the `send-purge`
 * lease lets one instance of a fleet do it at a time. Each Send goes in its own short transaction
 * (row and storage count), its file after commit: a crash in between leaves a file without a
 * Send, which the next run cannot see but costs no one's quota.
 */
export function createSendPurge({
  db,
  clock,
  store,
  pushes,
  intervalMs = 10 * 60 * 1000,
  lease = createLease(db, clock, LEASE),
  onRun,
}: {
  db: Db;
  clock: Clock;
  store: FileStore;
  pushes: Pushes;
  intervalMs?: number;
  lease?: Lease;
  /** Told how each run ended: purged (held the lease), skipped or failed. */
  onRun?: (result: JobRunResult) => void;
}) {
  const purge = {
    /** Purges once if this instance holds the lease: the number of Sends purged, or null when another instance holds it. */
    async purgeOnce(): Promise<number | null> {
      if (!(await lease.acquire(Math.max(intervalMs, 5 * 60 * 1000)))) return null;
      let total = 0;
      for (;;) {
        const now = clock.now().toISOString();
        const rows = await sendsToPurge(db, now, BATCH);
        for (const row of rows) {
          await db.transaction().execute(async (tx) => {
            await deleteSend(tx, row.id);
            const file = parseSendData(row.data).file;
            // Only an uploaded file counted (attachment-data.ts countedBytes).
            if (file?.validated) await releaseStorage(tx, { user_id: row.user_id, organization_id: null }, file.size);
            await touchAccountRevision(tx, row.user_id, now);
          });
          await store.deleteAll(sendFolder(row.id));
          pushes.send(sendPush(PushType.SyncSendDelete, { ...row, revision_date: now }, null));
        }
        total += rows.length;
        if (rows.length < BATCH) return total;
      }
    },
    start: (onError: (error: unknown) => void) => job.start(onError),
    stop: () => job.stop(),
  };
  const job = everyInterval(intervalMs, () => purge.purgeOnce(), lease, onRun);
  return purge;
}

export type SendPurge = ReturnType<typeof createSendPurge>;
