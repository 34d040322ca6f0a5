import type { Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DevicesTable } from '../../db/schema.js';
import type { DeviceRow } from '../../platform/auth/users.repository.js';

export async function findDeviceById(db: Executor, userId: string, id: string): Promise<DeviceRow | undefined> {
  return db.selectFrom('devices').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
}

/** Writes a device's trust fields, only while it is still the user's. */
export async function updateDeviceOfUser(db: Executor, userId: string, id: string, changes: Updateable<DevicesTable>): Promise<void> {
  await db.updateTable('devices').set(changes).where('id', '=', id).where('user_id', '=', userId).execute();
}

/** Ends the sessions of one device: its refresh tokens stop working. */
export async function deleteRefreshTokensOfDevice(db: Executor, deviceId: string): Promise<void> {
  await db.deleteFrom('refresh_tokens').where('device_id', '=', deviceId).execute();
}

/**
 * Locks the account's device rows for the rest of the transaction (`for update` on PostgreSQL;
 * SQLite's transaction holds the write lock) and answers them, so that a re-wrap and a new trust
 * do not cross.
 */
export async function lockDevicesOfUser(db: Executor, userId: string): Promise<DeviceRow[]> {
  return db.selectFrom('devices').selectAll().where('user_id', '=', userId).orderBy('id').forUpdate().execute();
}
