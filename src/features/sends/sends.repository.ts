import { sql } from 'kysely';
import type { Insertable } from 'kysely';
import type { SendsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import type { SendRow } from './sends.schemas.js';

export async function listSends(executor: Executor, userId: string): Promise<SendRow[]> {
  return executor.selectFrom('sends').selectAll().where('user_id', '=', userId).orderBy('creation_date').execute();
}

export async function findSend(executor: Executor, id: string): Promise<SendRow | undefined> {
  return executor.selectFrom('sends').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function insertSend(executor: Executor, row: Insertable<SendsTable>): Promise<void> {
  await executor.insertInto('sends').values(row).execute();
}

export async function updateSend(executor: Executor, id: string, values: Partial<Insertable<SendsTable>>): Promise<void> {
  await executor.updateTable('sends').set(values).where('id', '=', id).execute();
}

/** Takes the Send's row lock for the rest of the transaction (`for update`; left out on SQLite, whose transaction holds the database). */
export async function lockSend(executor: Executor, id: string): Promise<void> {
  await executor.selectFrom('sends').select('id').where('id', '=', id).forUpdate().execute();
}

export async function deleteSend(executor: Executor, id: string): Promise<void> {
  await executor.deleteFrom('sends').where('id', '=', id).execute();
}

/**
 * Counts one access if the Send may still be accessed at `now` (enabled, under its maximum, not
 * expired, not past deletion): one conditional update, so concurrent recipients can never pass
 * the maximum together. False when the Send could not be accessed.
 */
export async function countAccess(executor: Executor, id: string, now: string): Promise<boolean> {
  const done = await executor
    .updateTable('sends')
    .set({ access_count: sql`access_count + 1`, revision_date: now })
    .where('id', '=', id)
    .where('disabled', '=', false)
    .where((eb) => eb.or([eb('max_access_count', 'is', null), eb('access_count', '<', eb.ref('max_access_count'))]))
    .where((eb) => eb.or([eb('expiration_date', 'is', null), eb('expiration_date', '>', now)]))
    .where('deletion_date', '>', now)
    .executeTakeFirst();
  return Number(done.numUpdatedRows) === 1;
}

/** Records a download URL handed out for a Send's file, and drops the Send's expired ones. */
export async function addDownload(executor: Executor, row: { id: string; send_id: string; expiration_date: string }, now: string): Promise<void> {
  await executor.deleteFrom('send_downloads').where('send_id', '=', row.send_id).where('expiration_date', '<=', now).execute();
  await executor.insertInto('send_downloads').values(row).execute();
}

/**
 * Uses a download URL: deletes it if it is unexpired and its Send may still be read (enabled,
 * not expired nor past deletion, not over its maximum: the URL's own access is within it, so
 * only a maximum lowered since refuses it). One conditional delete, so of several downloads at
 * once, on any instances, exactly one gets it. False when the URL may not be used.
 */
export async function useDownload(executor: Executor, id: string, sendId: string, now: string): Promise<boolean> {
  const done = await executor
    .deleteFrom('send_downloads')
    .where('id', '=', id)
    .where('send_id', '=', sendId)
    .where('expiration_date', '>', now)
    .where((eb) =>
      eb.exists(
        eb
          .selectFrom('sends')
          .select('sends.id')
          .whereRef('sends.id', '=', 'send_downloads.send_id')
          .where('sends.disabled', '=', false)
          .where((s) => s.or([s('sends.max_access_count', 'is', null), s('sends.access_count', '<=', s.ref('sends.max_access_count'))]))
          .where((s) => s.or([s('sends.expiration_date', 'is', null), s('sends.expiration_date', '>', now)]))
          .where('sends.deletion_date', '>', now),
      ),
    )
    .executeTakeFirst();
  return Number(done.numDeletedRows) === 1;
}

/** Sends whose deletion date has passed, oldest first. */
export async function sendsToPurge(executor: Executor, now: string, limit: number): Promise<SendRow[]> {
  return executor.selectFrom('sends').selectAll().where('deletion_date', '<=', now).orderBy('deletion_date').limit(limit).execute();
}

/** Keeps a new code for a Send and address, replacing the one mailed before, with no wrong tries. */
export async function putSendCode(executor: Executor, row: { send_id: string; email_digest: string; code_hash: string; expiration_date: string; creation_date: string }): Promise<void> {
  await executor
    .insertInto('send_access_codes')
    .values({ ...row, attempts: 0 })
    .onConflict((oc) => oc.columns(['send_id', 'email_digest']).doUpdateSet({ code_hash: row.code_hash, attempts: 0, expiration_date: row.expiration_date, creation_date: row.creation_date }))
    .execute();
}

/** Uses a code: deleted only while it is still the same one, so of two uses at once only one gets it. */
export async function takeSendCode(executor: Executor, sendId: string, emailDigest: string, codeHash: string): Promise<boolean> {
  const done = await executor.deleteFrom('send_access_codes').where('send_id', '=', sendId).where('email_digest', '=', emailDigest).where('code_hash', '=', codeHash).executeTakeFirst();
  return Number(done.numDeletedRows) === 1;
}

/**
 * Spends one try of the live code, in one statement so that concurrent guesses cannot all read
 * the same count: answers the code's hash when a try was left, nothing when the code is gone,
 * past its time (`now`) or past its `tries`.
 */
export async function spendSendCodeTry(executor: Executor, sendId: string, emailDigest: string, now: string, tries: number): Promise<string | undefined> {
  const row = await executor
    .updateTable('send_access_codes')
    .set((eb) => ({ attempts: eb('attempts', '+', 1) }))
    .where('send_id', '=', sendId)
    .where('email_digest', '=', emailDigest)
    .where('attempts', '<', tries)
    .where('expiration_date', '>', now)
    .returning('code_hash')
    .executeTakeFirst();
  return row?.code_hash;
}

/** Forgets a code past its time or tries; a live one (a new code mailed meanwhile) stays. */
export async function deleteDeadSendCode(executor: Executor, sendId: string, emailDigest: string, now: string, tries: number): Promise<void> {
  await executor
    .deleteFrom('send_access_codes')
    .where('send_id', '=', sendId)
    .where('email_digest', '=', emailDigest)
    .where((eb) => eb.or([eb('attempts', '>=', tries), eb('expiration_date', '<=', now)]))
    .execute();
}
