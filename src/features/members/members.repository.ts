import type { Insertable, Selectable, Updateable } from 'kysely';
import type { OrganizationUsersTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { twoFactorOn } from '../../platform/auth/two-factor-state.js';

/** A membership row with its role and status typed as the enums they are. */
export type MemberRow = Omit<Selectable<OrganizationUsersTable>, 'type' | 'status'> & { type: OrganizationUserType; status: OrganizationUserStatusType };

/** A membership with the account it belongs to (none while only invited). */
export interface MemberWithUser extends MemberRow {
  /** The member's identity at the organization's SSO provider, once linked. */
  sso_external_id: string | null;
  user_email: string | null;
  user_name: string | null;
  avatar_color: string | null;
  has_master_password: boolean;
  two_factor_enabled: boolean;
}

export interface CollectionAccessRow {
  organization_user_id: string;
  collection_id: string;
  read_only: boolean | number;
  hide_passwords: boolean | number;
  manage: boolean | number;
}

export async function findMember(db: Executor, organizationId: string, id: string): Promise<MemberRow | undefined> {
  return db.selectFrom('organization_users').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

/** A membership by id alone: accepting an invitation happens before the caller is a member. */
export async function findMemberById(db: Executor, id: string): Promise<MemberRow | undefined> {
  return db.selectFrom('organization_users').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function findMembers(db: Executor, organizationId: string, ids: readonly string[]): Promise<MemberRow[]> {
  if (ids.length === 0) return [];
  return db.selectFrom('organization_users').selectAll().where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
}

export async function listMembersWithUsers(db: Executor, organizationId: string, ids?: readonly string[]): Promise<MemberWithUser[]> {
  if (ids?.length === 0) return [];
  let query = db
    .selectFrom('organization_users')
    .leftJoin('users', 'users.id', 'organization_users.user_id')
    // sso_users is unique per (user, organization): at most one link per membership.
    .leftJoin('sso_users', (join) => join.onRef('sso_users.user_id', '=', 'organization_users.user_id').onRef('sso_users.organization_id', '=', 'organization_users.organization_id'))
    .selectAll('organization_users')
    .select((eb) => [
      'sso_users.external_id as sso_external_id',
      'users.email as user_email',
      'users.name as user_name',
      'users.avatar_color',
      eb('users.master_password_hash', 'is not', null).as('has_master_password'),
      twoFactorOn('organization_users.user_id').as('two_factor_enabled'),
    ])
    .where('organization_users.organization_id', '=', organizationId);
  if (ids) query = query.where('organization_users.id', 'in', ids);
  const rows = await query.orderBy('organization_users.creation_date').orderBy('organization_users.id').execute();
  return rows.map((row) => ({ ...row, has_master_password: Boolean(row.has_master_password), two_factor_enabled: Boolean(row.two_factor_enabled) }));
}

/** Which of these (normalized) emails already belong to the organization, invited or joined. */
export async function knownEmails(db: Executor, organizationId: string, emails: readonly string[]): Promise<Set<string>> {
  if (emails.length === 0) return new Set();
  const invited = await db
    .selectFrom('organization_users')
    .select('email')
    .where('organization_id', '=', organizationId)
    .where('email', 'in', emails)
    .execute();
  const joined = await db
    .selectFrom('organization_users')
    .innerJoin('users', 'users.id', 'organization_users.user_id')
    .select('users.email')
    .where('organization_users.organization_id', '=', organizationId)
    .where('users.email', 'in', emails)
    .execute();
  return new Set([...invited.map((r) => r.email), ...joined.map((r) => r.email)].filter((e): e is string => e !== null));
}

export async function insertMembers(db: Executor, rows: Insertable<OrganizationUsersTable>[]): Promise<void> {
  if (rows.length === 0) return;
  await db.insertInto('organization_users').values(rows).execute();
}

export async function updateMember(db: Executor, id: string, changes: Updateable<OrganizationUsersTable>): Promise<void> {
  await db.updateTable('organization_users').set(changes).where('id', '=', id).execute();
}

/** Confirmed owners other than the given memberships. */
export async function countConfirmedOwnersExcept(db: Executor, organizationId: string, exceptIds: readonly string[]): Promise<number> {
  let query = db
    .selectFrom('organization_users')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('type', '=', OrganizationUserType.Owner)
    .where('status', '=', OrganizationUserStatusType.Confirmed);
  if (exceptIds.length > 0) query = query.where('id', 'not in', exceptIds);
  return Number((await query.executeTakeFirstOrThrow()).n);
}

/** Every membership of an account, in any organization and status. */
export async function membershipsOfUser(db: Executor, userId: string): Promise<Pick<MemberRow, 'id' | 'organization_id' | 'type' | 'status'>[]> {
  return db.selectFrom('organization_users').select(['id', 'organization_id', 'type', 'status']).where('user_id', '=', userId).execute();
}

/** Owner or admin memberships of an account in free organizations other than this one (status past invited). */
export async function countFreeOrgAdminships(db: Executor, userId: string, exceptOrganizationId: string, freePlan: number): Promise<number> {
  const row = await db
    .selectFrom('organization_users')
    .innerJoin('organizations', 'organizations.id', 'organization_users.organization_id')
    .select((eb) => eb.fn.countAll<string | number>().as('n'))
    .where('organization_users.user_id', '=', userId)
    .where('organization_users.organization_id', '!=', exceptOrganizationId)
    .where('organization_users.type', 'in', [OrganizationUserType.Owner, OrganizationUserType.Admin])
    .where('organization_users.status', '!=', OrganizationUserStatusType.Invited)
    .where('organizations.plan_type', '=', freePlan)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function collectionsOfMembers(db: Executor, memberIds: readonly string[]): Promise<CollectionAccessRow[]> {
  if (memberIds.length === 0) return [];
  return db
    .selectFrom('collection_users')
    .select(['organization_user_id', 'collection_id', 'read_only', 'hide_passwords', 'manage'])
    .where('organization_user_id', 'in', memberIds)
    .orderBy('collection_id')
    .execute();
}

export async function groupsOfMembers(db: Executor, memberIds: readonly string[]): Promise<{ organization_user_id: string; group_id: string }[]> {
  if (memberIds.length === 0) return [];
  return db.selectFrom('group_users').select(['organization_user_id', 'group_id']).where('organization_user_id', 'in', memberIds).orderBy('group_id').execute();
}

export async function replaceMemberCollections(
  db: Executor,
  memberId: string,
  collections: readonly { id: string; readOnly: boolean; hidePasswords: boolean; manage: boolean }[],
): Promise<void> {
  await db.deleteFrom('collection_users').where('organization_user_id', '=', memberId).execute();
  if (collections.length === 0) return;
  await db
    .insertInto('collection_users')
    .values(collections.map((c) => ({ collection_id: c.id, organization_user_id: memberId, read_only: c.readOnly, hide_passwords: c.hidePasswords, manage: c.manage })))
    .execute();
}

export async function replaceMemberGroups(db: Executor, memberId: string, groupIds: readonly string[]): Promise<void> {
  await db.deleteFrom('group_users').where('organization_user_id', '=', memberId).execute();
  if (groupIds.length === 0) return;
  await db
    .insertInto('group_users')
    .values(groupIds.map((group_id) => ({ group_id, organization_user_id: memberId })))
    .execute();
}

/** Gives the memberships access to Secrets Manager in one statement. */
export async function grantSecretsManager(db: Executor, ids: readonly string[], now: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('organization_users').set({ access_secrets_manager: true, revision_date: now }).where('id', 'in', ids).execute();
}
