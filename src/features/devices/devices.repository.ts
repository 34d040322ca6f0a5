import type { Executor } from '../../db/database.js';
import type { DeviceRow } from '../../platform/auth/users.repository.js';

export async function findDevicesOfUser(db: Executor, userId: string): Promise<DeviceRow[]> {
  return db.selectFrom('devices').selectAll().where('user_id', '=', userId).orderBy('creation_date', 'asc').execute();
}

/** The account's devices it has not deactivated (removed from its list), oldest first. */
export async function activeDevicesOfUser(db: Executor, userId: string): Promise<DeviceRow[]> {
  return (await findDevicesOfUser(db, userId)).filter((d) => Boolean(d.active));
}

/**
 * Per device identifier, the newest login-with-device request (types 0 and 1, not an admin
 * approval) made since `since`, when it is still unanswered: as the official device list's
 * DevicePendingAuthRequest.
 */
export async function pendingRequestsByDevice(db: Executor, userId: string, since: string): Promise<Map<string, { id: string; creationDate: string }>> {
  const rows = await db
    .selectFrom('auth_requests')
    .select(['id', 'request_device_identifier', 'creation_date', 'approved'])
    .where('user_id', '=', userId)
    .where('type', 'in', [0, 1])
    .where('creation_date', '>=', since)
    .orderBy('creation_date', 'desc')
    .orderBy('id', 'desc')
    .execute();
  const newest = new Map<string, { id: string; creationDate: string }>();
  const seen = new Set<string>();
  for (const row of rows) {
    if (seen.has(row.request_device_identifier)) continue;
    seen.add(row.request_device_identifier);
    if (row.approved === null) newest.set(row.request_device_identifier, { id: row.id, creationDate: row.creation_date });
  }
  return newest;
}

/** Whether the account with this (normalized) email has logged in from this device identifier. */
export async function isKnownDevice(db: Executor, email: string, identifier: string): Promise<boolean> {
  const row = await db
    .selectFrom('devices')
    .innerJoin('users', 'users.id', 'devices.user_id')
    .select('devices.id')
    .where('users.email', '=', email)
    .where('devices.identifier', '=', identifier)
    .executeTakeFirst();
  return row !== undefined;
}
