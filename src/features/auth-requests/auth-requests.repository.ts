import type { Insertable, Selectable, Updateable } from 'kysely';
import type { AuthRequestsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';

export type AuthRequestRow = Selectable<AuthRequestsTable>;

export async function insertAuthRequest(db: Executor, row: Insertable<AuthRequestsTable>): Promise<void> {
  await db.insertInto('auth_requests').values(row).execute();
}

/** A request with the id of the user's device of the asking identifier (null until that device has logged in). */
export type AuthRequestWithDevice = AuthRequestRow & { request_device_id: string | null };

const withDevice = (db: Executor) =>
  db
    .selectFrom('auth_requests as ar')
    .leftJoin('devices as d', (join) => join.onRef('d.identifier', '=', 'ar.request_device_identifier').onRef('d.user_id', '=', 'ar.user_id'))
    .selectAll('ar')
    .select('d.id as request_device_id');

export async function findAuthRequest(db: Executor, id: string): Promise<AuthRequestWithDevice | undefined> {
  return withDevice(db).where('ar.id', '=', id).executeTakeFirst();
}

/** A user's requests, newest first. */
export async function listAuthRequests(db: Executor, userId: string): Promise<AuthRequestWithDevice[]> {
  return withDevice(db).where('ar.user_id', '=', userId).orderBy('ar.creation_date', 'desc').orderBy('ar.id').execute();
}

/**
 * The official pending list: per asking device, its newest request made since `since`, when
 * that one is still unanswered.
 */
export async function pendingAuthRequests(db: Executor, userId: string, since: string): Promise<AuthRequestWithDevice[]> {
  const rows = await withDevice(db)
    .where('ar.user_id', '=', userId)
    // A device answers only a device's requests; admin approval requests are the admins' (admin-requests.repository.ts).
    .where('ar.type', 'in', [0, 1])
    .where('ar.creation_date', '>=', since)
    .orderBy('ar.creation_date', 'desc')
    .orderBy('ar.id', 'desc')
    .execute();
  const newest = new Map<string, (typeof rows)[number]>();
  for (const row of rows) if (!newest.has(row.request_device_identifier)) newest.set(row.request_device_identifier, row);
  return [...newest.values()].filter((row) => row.approved === null);
}

/** Writes an answer only while the request is unanswered; false when another answer came first. */
export async function answerAuthRequest(db: Executor, id: string, answer: Updateable<AuthRequestsTable>): Promise<boolean> {
  const result = await db.updateTable('auth_requests').set(answer).where('id', '=', id).where('approved', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Marks an approved request as used by a login, once: false when a login already used it. */
export async function markAuthRequestUsed(db: Executor, id: string, date: string): Promise<boolean> {
  const result = await db.updateTable('auth_requests').set({ authentication_date: date }).where('id', '=', id).where('authentication_date', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}
