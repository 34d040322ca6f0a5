import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { createLease, everyInterval, type Lease, type JobRunResult } from '../../db/leases.js';
import { parseSendData } from '../sends/sends.schemas.js';
import { namedFiles, parseAttachments } from '../vault/attachment-data.js';
import type { FileStore, StoredFile } from '../../platform/storage/file-store.js';
import { dropStaleAnnouncements } from './pending-uploads.js';
import { ATTACHMENTS_AREA, SENDS_AREA } from '../../platform/storage/store-layout.js';

const BATCH = 500;
const LEASE = 'file-sweep';
/** Files younger than this are never swept: their upload may still be in flight. */
export const SWEEP_MIN_AGE_MS = 60 * 60 * 1000;

/**
 * Removes files in the store that no row names any more: left by a crash between a delete's
 * commit and its file removal, or by a file removal that failed. Every delete path removes its
 * files itself after commit; this is the safety net. Files written less than an hour ago are left
 * alone, so an upload in flight is never swept. First it drops the announcements whose upload
 * never came (pending-uploads.ts). The `file-sweep` lease lets one instance of a fleet sweep at a
 * time. Storage counters are untouched: they count uploaded files named by rows, and only
 * announcements and files without a row are removed.
 */
export function createFileSweeper({
  db,
  clock,
  store,
  intervalMs = 60 * 60 * 1000,
  lease = createLease(db, clock, LEASE),
  onRun,
}: {
  db: Db;
  clock: Clock;
  store: FileStore;
  intervalMs?: number;
  lease?: Lease;
  /** Told how each run ended: swept (held the lease), skipped or failed. */
  onRun?: (result: JobRunResult) => void;
}) {
  /** The keys of `files` no row names. */
  async function orphans(files: readonly StoredFile[]): Promise<string[]> {
    const parts = files.map((f) => {
      const [area, owner, id] = f.key.split('/') as [string, string, string | undefined];
      return { key: f.key, area, owner, id };
    });
    const cipherIds = [...new Set(parts.filter((p) => p.area === ATTACHMENTS_AREA).map((p) => p.owner))];
    const sendIds = [...new Set(parts.filter((p) => p.area === SENDS_AREA).map((p) => p.owner))];
    const ciphers =
      cipherIds.length > 0 ? await db.selectFrom('ciphers').select(['id', 'attachments']).where('id', 'in', cipherIds).execute() : [];
    const sends = sendIds.length > 0 ? await db.selectFrom('sends').select(['id', 'data']).where('id', 'in', sendIds).execute() : [];
    const namedOf = new Map(ciphers.map((c) => [c.id, new Set(namedFiles(parseAttachments(c.attachments)))]));
    const sendFileOf = new Map(sends.map((s) => [s.id, parseSendData(s.data).file?.id ?? null]));
    return parts
      .filter((p) => {
        if (p.id === undefined) return true;
        if (p.area === 'attachments') return !namedOf.get(p.owner)?.has(p.id);
        return sendFileOf.get(p.owner) !== p.id;
      })
      .map((p) => p.key);
  }

  const sweeper = {
    /** Sweeps once if this instance holds the lease: the number of files removed, or null when another instance holds it. */
    async sweepOnce(): Promise<number | null> {
      if (!(await lease.acquire(Math.max(intervalMs, 15 * 60 * 1000)))) return null;
      await dropStaleAnnouncements(db, clock.now());
      const cutoff = clock.now().getTime() - SWEEP_MIN_AGE_MS;
      let removed = 0;
      let batch: StoredFile[] = [];
      const flush = async () => {
        for (const key of await orphans(batch)) {
          await store.delete(key);
          removed++;
        }
        batch = [];
      };
      for await (const file of store.list()) {
        if (file.modified.getTime() > cutoff) continue;
        batch.push(file);
        if (batch.length >= BATCH) await flush();
      }
      await flush();
      return removed;
    },
    start: (onError: (error: unknown) => void) => job.start(onError),
    stop: () => job.stop(),
  };
  const job = everyInterval(intervalMs, () => sweeper.sweepOnce(), lease, onRun);
  return sweeper;
}

export type FileSweeper = ReturnType<typeof createFileSweeper>;
