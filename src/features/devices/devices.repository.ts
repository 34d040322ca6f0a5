import type { Executor } from '../../db/database.js';
import type { DeviceRow } from '../../platform/auth/users.repository.js';

export async function findDevicesOfUser(db: Executor, userId: string): Promise<DeviceRow[]> {
  return db.selectFrom('devices').selectAll().where('user_id', '=', userId).orderBy('creation_date', 'asc').execute();
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
