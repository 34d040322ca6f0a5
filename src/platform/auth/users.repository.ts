import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { DevicesTable, UsersTable } from '../../db/schema.js';

export type UserRow = Selectable<UsersTable>;
export type DeviceRow = Selectable<DevicesTable>;

export async function findUserById(db: Executor, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
}

/** `email` must already be normalized (trimmed, lower case). */
export async function findUserByEmail(db: Executor, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function insertUser(db: Executor, user: Insertable<UsersTable>): Promise<void> {
  await db.insertInto('users').values(user).execute();
}

export async function updateUser(db: Executor, id: string, changes: Updateable<UsersTable>): Promise<void> {
  await db.updateTable('users').set(changes).where('id', '=', id).execute();
}

/** Records the user key id when the account has none yet; answers whether it did. */
export async function setUserKeyIdIfUnset(db: Executor, id: string, userKeyId: string): Promise<boolean> {
  const result = await db.updateTable('users').set({ user_key_id: userKeyId }).where('id', '=', id).where('user_key_id', 'is', null).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteUser(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('users').where('id', '=', id).execute();
}

/** Clients decide whether to sync by this date; every vault change moves it. */
export async function touchAccountRevision(db: Executor, userId: string, date: string): Promise<void> {
  await db.updateTable('users').set({ account_revision_date: date }).where('id', '=', userId).execute();
}

/** The same for several users at once, in one statement. */
export async function touchAccountRevisions(db: Executor, userIds: readonly string[], date: string): Promise<void> {
  if (userIds.length === 0) return;
  await db.updateTable('users').set({ account_revision_date: date }).where('id', 'in', userIds).execute();
}

export async function findDevice(db: Executor, userId: string, identifier: string): Promise<DeviceRow | undefined> {
  return db.selectFrom('devices').selectAll().where('user_id', '=', userId).where('identifier', '=', identifier).executeTakeFirst();
}

export async function insertDevice(db: Executor, device: Insertable<DevicesTable>): Promise<void> {
  await db.insertInto('devices').values(device).execute();
}

export async function updateDevice(db: Executor, id: string, changes: Updateable<DevicesTable>): Promise<void> {
  await db.updateTable('devices').set(changes).where('id', '=', id).execute();
}

export interface UserListRow {
  id: string;
  email: string;
  name: string | null;
  email_verified: boolean | number;
  disabled: boolean | number;
  creation_date: string;
  organizations: number | string | bigint;
}

/** Every account, oldest first, with how many organizations it belongs to (any membership status). */
export async function listUsers(db: Executor): Promise<UserListRow[]> {
  return db
    .selectFrom('users')
    .select((eb) => [
      'users.id',
      'users.email',
      'users.name',
      'users.email_verified',
      'users.disabled',
      'users.creation_date',
      eb
        .selectFrom('organization_users')
        .select((inner) => inner.fn.countAll().as('n'))
        .whereRef('organization_users.user_id', '=', 'users.id')
        .as('organizations'),
    ])
    .orderBy('users.creation_date')
    .orderBy('users.email')
    .execute() as Promise<UserListRow[]>;
}
