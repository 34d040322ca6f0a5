import { createHash } from 'node:crypto';
import { chunks } from '../../db/chunks.js';
import type { Executor } from './audit-log.js';

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
