import type { Executor } from '../../db/database.js';
import { OrganizationUserStatusType, type OrganizationUserType } from '../../platform/access/roles.js';
import type { AuthRequestRow } from './auth-requests.repository.js';
import { AuthRequestType } from './auth-requests.schemas.js';

/**
 * An admin approval request with the asking member's email and membership id, as the admins see
 * it, and the member's role (who may answer for them: only those who may recover their account).
 */
export type AdminRequestRow = AuthRequestRow & { email: string; organization_user_id: string; organization_user_type: OrganizationUserType };

/**
 * The organization's admin approval requests of members it still has (the official join on
 * OrganizationUser: a member removed since asking takes their requests out of sight).
 */
const adminRequests = (db: Executor, organizationId: string) =>
  db
    .selectFrom('auth_requests as ar')
    .innerJoin('organization_users as ou', (join) => join.onRef('ou.user_id', '=', 'ar.user_id').onRef('ou.organization_id', '=', 'ar.organization_id'))
    .innerJoin('users as u', 'u.id', 'ar.user_id')
    .selectAll('ar')
    .select(['u.email as email', 'ou.id as organization_user_id', 'ou.type as organization_user_type'])
    .where('ar.organization_id', '=', organizationId)
    .where('ar.type', '=', AuthRequestType.AdminApproval);

/** Unanswered requests made since `since` (the 7-day lifetime), oldest first as the web vault lists them. */
export async function pendingAdminRequests(db: Executor, organizationId: string, since: string): Promise<AdminRequestRow[]> {
  return adminRequests(db, organizationId).where('ar.response_date', 'is', null).where('ar.creation_date', '>=', since).orderBy('ar.creation_date').orderBy('ar.id').execute();
}

/** The organization's requests among `ids`; other organizations' and other types' are left out. */
export async function findAdminRequests(db: Executor, organizationId: string, ids: readonly string[]): Promise<AdminRequestRow[]> {
  if (ids.length === 0) return [];
  return adminRequests(db, organizationId).where('ar.id', 'in', [...ids]).execute();
}

/**
 * The memberships an admin approval request goes to: accepted or confirmed members enrolled in
 * account recovery (only their admins can unwrap the user key), of enabled organizations.
 */
export async function approvingMemberships(db: Executor, userId: string): Promise<{ id: string; organization_id: string; type: number }[]> {
  return db
    .selectFrom('organization_users as ou')
    .innerJoin('organizations as o', 'o.id', 'ou.organization_id')
    .select(['ou.id', 'ou.organization_id', 'ou.type'])
    .where('ou.user_id', '=', userId)
    .where('ou.status', 'in', [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed])
    .where('ou.reset_password_key', 'is not', null)
    .where('o.enabled', '=', true)
    .orderBy('ou.organization_id')
    .execute();
}

/** Whether the user belongs to any organization at all (for the official refusal's wording). */
export async function hasMemberships(db: Executor, userId: string): Promise<boolean> {
  return Boolean(await db.selectFrom('organization_users').select('id').where('user_id', '=', userId).executeTakeFirst());
}

/**
 * The user's unanswered admin requests from one device made since `since` (the 7-day lifetime),
 * one per organization at most (the newest), locking them (`for update` on PostgreSQL) so that
 * an admin's answer and a refresh of the same request do not cross.
 */
export async function pendingRequestsOfDevice(db: Executor, userId: string, deviceIdentifier: string, since: string): Promise<Map<string, AuthRequestRow>> {
  const rows = await db
    .selectFrom('auth_requests')
    .selectAll()
    .where('user_id', '=', userId)
    .where('type', '=', AuthRequestType.AdminApproval)
    .where('request_device_identifier', '=', deviceIdentifier)
    .where('approved', 'is', null)
    .where('response_date', 'is', null)
    .where('creation_date', '>=', since)
    .orderBy('creation_date', 'desc')
    .orderBy('id')
    .forUpdate()
    .execute();
  const byOrganization = new Map<string, AuthRequestRow>();
  for (const row of rows) if (row.organization_id && !byOrganization.has(row.organization_id)) byOrganization.set(row.organization_id, row);
  return byOrganization;
}

/** Gives a still unanswered request the asking device's new key and access code; false once it was answered. */
export async function refreshPendingRequest(db: Executor, id: string, changes: Pick<AuthRequestRow, 'public_key' | 'access_code' | 'request_device_type' | 'request_ip_address'>): Promise<boolean> {
  const result = await db.updateTable('auth_requests').set(changes).where('id', '=', id).where('approved', 'is', null).where('response_date', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}
