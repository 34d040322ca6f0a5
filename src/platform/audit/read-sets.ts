import { createHash } from 'node:crypto';
import { chunks } from '../../db/chunks.js';
import type { Executor } from '../../db/database.js';
import { createByteLru } from '../../shared/byte-lru.js';

/**
 * Reads of several secrets at once (a machine sync of thousands, a get-by-ids) are one audit
 * row naming a read set, not one row per secret: writing 5,000 event rows took a sync from
 * milliseconds to a tenth of a second, in the read's own transaction.
 *
 * A read set is a list of secret ids in the order they were read, named by the SHA-256 of that
 * list and stored once: a machine account that syncs the same secrets every minute adds one
 * event row a sync and no set. Whoever reads the log sees one Secret_Retrieved per secret of
 * the set, as the official server records them (`events.service.ts` expands them).
 */
export interface ReadSet {
  id: string;
  secretIds: readonly string[];
}

/** The read set of these secrets, in this order. */
export function readSetOf(secretIds: readonly string[]): ReadSet {
  const hash = createHash('sha256');
  for (const id of secretIds) hash.update(id).update(',');
  return { id: hash.digest('hex'), secretIds };
}

/**
 * The read sets this process stored, or found stored, in the last hour: a read of one of them
 * records its event row alone, in one statement, without trying to store the set again (a
 * machine account polling the same get-by-ids or sync repeats the same set). Sound because a set
 * is never changed and is deleted only by event retention, once no event names it and it is
 * older than the retention (a day at least): the event recorded with the set, at most an hour
 * ago, still names it.
 */
export interface StoredReadSets {
  has(id: string): boolean;
  /** Call once the transaction that stored the set (or found it stored) has committed. */
  add(id: string): void;
}

/** Remembered this long after being stored: well inside the shortest event retention (1 day). */
const REMEMBERED_MS = 60 * 60 * 1000;

export function createStoredReadSets(now: () => number): StoredReadSets {
  // When each set was stored, the 10,000 most recently used.
  const stored = createByteLru<number>(10_000, () => 1);
  return {
    has(id) {
      const since = stored.get(id);
      if (since === undefined) return false;
      if (now() - since < REMEMBERED_MS) return true;
      stored.delete(id);
      return false;
    },
    add(id) {
      stored.set(id, now());
    },
  };
}

/** Stores the set unless it is already there (a set never changes: its name is its content). */
export async function saveReadSet(executor: Executor, set: ReadSet, now: string): Promise<void> {
  const inserted = await executor
    .insertInto('secret_read_sets')
    .values({ id: set.id, size: set.secretIds.length, creation_date: now })
    .onConflict((oc) => oc.column('id').doNothing())
    .executeTakeFirst();
  if (Number(inserted.numInsertedOrUpdatedRows ?? 0) === 0) return;
  const members = set.secretIds.map((secretId, position) => ({ read_set_id: set.id, position, secret_id: secretId }));
  for (const part of chunks(members)) await executor.insertInto('secret_read_set_members').values(part).execute();
}

/** Up to `limit` secrets of a set, from `from` on, in the order they were read. */
export async function readSetMembers(executor: Executor, setId: string, from: number, limit: number): Promise<{ position: number; secret_id: string }[]> {
  return executor
    .selectFrom('secret_read_set_members')
    .select(['position', 'secret_id'])
    .where('read_set_id', '=', setId)
    .where('position', '>=', from)
    .orderBy('position')
    .limit(limit)
    .execute();
}
