import type { Executor } from '../../db/database.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';

/** What the relay's registration needs of a device, read when the message is delivered. */
export async function deviceForRegistration(db: Executor, deviceId: string) {
  return db.selectFrom('devices').select(['id', 'user_id', 'type', 'identifier', 'push_token', 'active']).where('id', '=', deviceId).executeTakeFirst();
}

/** The organizations where the user is a confirmed member, as the official registration lists them (DeviceService.cs). */
export async function confirmedOrganizationIds(db: Executor, userId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_users')
    .select('organization_id')
    .where('user_id', '=', userId)
    .where('status', '=', OrganizationUserStatusType.Confirmed)
    .orderBy('organization_id')
    .execute();
  return rows.map((r) => r.organization_id);
}

/** Which of these users are confirmed members of the organization now. */
export async function confirmedMembersAmong(db: Executor, organizationId: string, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db
    .selectFrom('organization_users')
    .select('user_id')
    .where('organization_id', '=', organizationId)
    .where('user_id', 'in', [...userIds])
    .where('status', '=', OrganizationUserStatusType.Confirmed)
    .execute();
  return rows.flatMap((r) => (r.user_id ? [r.user_id] : []));
}

/** The users with an active device holding a push token: whom the relay can reach. */
export async function usersWithPushTokens(db: Executor): Promise<string[]> {
  const rows = await db.selectFrom('devices').select('user_id').distinct().where('push_token', 'is not', null).where('active', '=', true).execute();
  return rows.map((r) => r.user_id);
}

/** The ids of these users' devices that hold a push token (the ones registered with the relay). */
export async function pushDeviceIdsOf(db: Executor, userIds: readonly string[]): Promise<string[]> {
  if (userIds.length === 0) return [];
  const rows = await db.selectFrom('devices').select(['id', 'active']).where('user_id', 'in', [...userIds]).where('push_token', 'is not', null).orderBy('id').execute();
  return rows.filter((r) => Boolean(r.active)).map((r) => r.id);
}

/** The acting device's id from its identifier, as the official relay engine looks it up (RelayPushEngine.cs), within the user when known. */
export async function deviceIdByIdentifier(db: Executor, identifier: string, userId: string | null): Promise<string | null> {
  let query = db.selectFrom('devices').select('id').where('identifier', '=', identifier);
  if (userId) query = query.where('user_id', '=', userId);
  const row = await query.orderBy('creation_date', 'desc').executeTakeFirst();
  return row?.id ?? null;
}
