import { type Insertable, type Selectable, type Updateable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { EmergencyAccessTable } from '../../db/schema.js';
import type { UserRow } from '../../platform/auth/users.repository.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { EmergencyAccessStatus } from './emergency-access-status.js';

export type EmergencyAccessRow = Selectable<EmergencyAccessTable>;

/** A grant with the names, emails and avatar colours of both accounts (EmergencyAccessDetails). */
export interface GrantDetailsRow extends EmergencyAccessRow {
  grantor_name: string | null;
  grantor_email: string;
  grantor_avatar_color: string | null;
  grantee_name: string | null;
  grantee_email: string | null;
  grantee_avatar_color: string | null;
}

function details(db: Executor) {
  return db
    .selectFrom('emergency_access as ea')
    .innerJoin('users as grantor', 'grantor.id', 'ea.grantor_id')
    .leftJoin('users as grantee', 'grantee.id', 'ea.grantee_id')
    .selectAll('ea')
    .select([
      'grantor.name as grantor_name',
      'grantor.email as grantor_email',
      'grantor.avatar_color as grantor_avatar_color',
      'grantee.name as grantee_name',
      'grantee.email as grantee_email',
      'grantee.avatar_color as grantee_avatar_color',
    ]);
}

export async function insertGrant(db: Executor, row: Insertable<EmergencyAccessTable>): Promise<void> {
  await db.insertInto('emergency_access').values(row).execute();
}

export async function findGrant(db: Executor, id: string): Promise<EmergencyAccessRow | undefined> {
  return db.selectFrom('emergency_access').selectAll().where('id', '=', id).executeTakeFirst();
}

/** The grant, locked for the rest of the transaction, so two steps on one grant go one after the other. */
export async function lockGrant(db: Executor, id: string): Promise<EmergencyAccessRow | undefined> {
  return db.selectFrom('emergency_access').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

/** The grantor's account, locked for the rest of the transaction, so a takeover reads it as it writes it. */
export async function lockUser(db: Executor, id: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('id', '=', id).forUpdate().executeTakeFirst();
}

export async function findGrantDetails(db: Executor, id: string): Promise<GrantDetailsRow | undefined> {
  return details(db).where('ea.id', '=', id).executeTakeFirst();
}

export async function updateGrant(db: Executor, id: string, changes: Updateable<EmergencyAccessTable>): Promise<void> {
  await db.updateTable('emergency_access').set(changes).where('id', '=', id).execute();
}

export async function deleteGrant(db: Executor, id: string): Promise<void> {
  await db.deleteFrom('emergency_access').where('id', '=', id).execute();
}

/** The grants the user made (GET trusted), oldest first. */
export async function grantsByGrantor(db: Executor, grantorId: string): Promise<GrantDetailsRow[]> {
  return details(db).where('ea.grantor_id', '=', grantorId).orderBy('ea.creation_date').orderBy('ea.id').execute();
}

/** The grants made to the user (GET granted): accepted ones, since an invitation names only an address. */
export async function grantsByGrantee(db: Executor, granteeId: string): Promise<GrantDetailsRow[]> {
  return details(db).where('ea.grantee_id', '=', granteeId).orderBy('ea.creation_date').orderBy('ea.id').execute();
}

/** Whether the grantor already named this address, as an invitation or as an account. */
export async function grantExists(db: Executor, grantorId: string, email: string): Promise<boolean> {
  const row = await db
    .selectFrom('emergency_access as ea')
    .leftJoin('users as grantee', 'grantee.id', 'ea.grantee_id')
    .select('ea.id')
    .where('ea.grantor_id', '=', grantorId)
    .where((eb) => eb.or([eb('ea.email', '=', email), eb('grantee.email', '=', email)]))
    .executeTakeFirst();
  return row !== undefined;
}

export async function countGrants(db: Executor, grantorId: string): Promise<number> {
  const row = await db.selectFrom('emergency_access').select((eb) => eb.fn.countAll<number | string>().as('n')).where('grantor_id', '=', grantorId).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Deletes every grant the users made or were named in, answering what it deleted. */
export async function deleteGrantsOfUsers(db: Executor, userIds: readonly string[]): Promise<EmergencyAccessRow[]> {
  return db
    .deleteFrom('emergency_access')
    .where((eb) => eb.or([eb('grantor_id', 'in', userIds), eb('grantee_id', 'in', userIds)]))
    .returningAll()
    .execute();
}

/** The grant `id` while it is still an invitation of `email`. */
export async function findInvitation(db: Executor, id: string, email: string): Promise<{ id: string } | undefined> {
  return db.selectFrom('emergency_access').select('id').where('id', '=', id).where('email', '=', email).where('status', '=', EmergencyAccessStatus.Invited).executeTakeFirst();
}

/** Recoveries still waiting on the grantor, with the details the jobs mail. */
export async function waitingRecoveries(db: Executor, limit: number, afterId: string): Promise<GrantDetailsRow[]> {
  return details(db).where('ea.status', '=', EmergencyAccessStatus.RecoveryInitiated).where('ea.id', '>', afterId).orderBy('ea.id').limit(limit).execute();
}

/** Sets the reminder date only if no other run set it since `seen`: one reminder per period across a fleet. */
export async function claimReminder(db: Executor, id: string, seen: string | null, now: string): Promise<boolean> {
  const result = await db
    .updateTable('emergency_access')
    .set({ last_notification_date: now })
    .where('id', '=', id)
    .where('status', '=', EmergencyAccessStatus.RecoveryInitiated)
    .where((eb) => (seen === null ? eb('last_notification_date', 'is', null) : eb('last_notification_date', '=', seen)))
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Approves a waiting recovery unless something else moved it first. */
export async function approveWaiting(db: Executor, id: string, now: string): Promise<boolean> {
  const result = await db
    .updateTable('emergency_access')
    .set({ status: EmergencyAccessStatus.RecoveryApproved, revision_date: now })
    .where('id', '=', id)
    .where('status', '=', EmergencyAccessStatus.RecoveryInitiated)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** The organizations of the user that have the policy on, where the user is more than invited. */
export async function organizationsWithPolicy(db: Executor, userId: string, type: number): Promise<string[]> {
  const rows = await db
    .selectFrom('policies')
    .innerJoin('organization_users', 'organization_users.organization_id', 'policies.organization_id')
    .innerJoin('organizations', 'organizations.id', 'policies.organization_id')
    .select('policies.organization_id')
    .where('organization_users.user_id', '=', userId)
    // A revoked member is still bound by the organization's policies (the official policy queries count them).
    .where('organization_users.status', 'in', [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed, OrganizationUserStatusType.Revoked])
    .where('organizations.enabled', '=', true)
    .where('organizations.use_policies', '=', true)
    .where('policies.type', '=', type)
    .where('policies.enabled', '=', true)
    .execute();
  return rows.map((r) => r.organization_id);
}

/** The user's memberships with their role, whatever their status. */
export async function membershipsOf(db: Executor, userId: string): Promise<{ id: string; organization_id: string; type: number }[]> {
  return db.selectFrom('organization_users').select(['id', 'organization_id', 'type']).where('user_id', '=', userId).execute();
}

/** True when `date` plus `days` is at or before `now` (ISO dates, compared in milliseconds). */
export function daysPassed(date: string, days: number, now: Date): boolean {
  return new Date(date).getTime() + days * 86_400_000 <= now.getTime();
}
