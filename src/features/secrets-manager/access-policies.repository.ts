import { expressionBuilder, type Expression, type ExpressionWrapper, type Insertable, type Selectable, type SqlBool } from 'kysely';
import { chunks } from '../../db/chunks.js';
import type { AccessPoliciesTable, DB } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import { confirmedInEnabledOrganizations } from '../../platform/access/memberships.js';

export type PolicyRow = Selectable<AccessPoliciesTable>;
export type GranteeColumn = 'organization_user_id' | 'group_id' | 'service_account_id';
export type GrantedColumn = 'granted_project_id' | 'granted_service_account_id' | 'granted_secret_id';

/** Rows per insert statement: 11 columns each keeps SQLite's bound-parameter count low. */
const INSERT_BATCH = 50;

/** Whether the current user is a member of the group `groupId` names; false when there is none. */
function currentUserInGroup(groupId: Expression<string | null>, currentUserId: string | null): ExpressionWrapper<DB, never, SqlBool> {
  const eb = expressionBuilder<DB, never>();
  if (currentUserId === null) return eb.lit(false);
  return eb.exists(
    eb
      .selectFrom('group_users as gu')
      .innerJoin('organization_users as gou', 'gou.id', 'gu.organization_user_id')
      .select('gu.group_id')
      .where('gu.group_id', '=', groupId)
      .where('gou.user_id', '=', currentUserId),
  );
}

/** Every policy granting the resource, with grantees of the given kinds. */
export async function policiesOn(db: Executor, granted: GrantedColumn, grantedId: string, grantees: readonly GranteeColumn[]): Promise<PolicyRow[]> {
  return db
    .selectFrom('access_policies')
    .selectAll()
    .where(granted, '=', grantedId)
    .where((eb) => eb.or(grantees.map((column) => eb(column, 'is not', null))))
    .execute();
}

/** The projects a machine account is granted. */
export async function projectGrantsOf(db: Executor, serviceAccountId: string): Promise<PolicyRow[]> {
  return db.selectFrom('access_policies').selectAll().where('service_account_id', '=', serviceAccountId).where('granted_project_id', 'is not', null).execute();
}

/**
 * The member and group policies on a resource, with the names the web app shows and whether
 * the policy names the current user (directly or through a group), in one query.
 */
export async function peoplePoliciesOn(db: Executor, granted: GrantedColumn, grantedId: string, currentUserId: string | null) {
  const rows = await db
    .selectFrom('access_policies as ap')
    .leftJoin('organization_users as ou', 'ou.id', 'ap.organization_user_id')
    .leftJoin('users as u', 'u.id', 'ou.user_id')
    .leftJoin('groups as g', 'g.id', 'ap.group_id')
    .select((eb) => [
      'ap.organization_user_id',
      'ap.group_id',
      'ap.read',
      'ap.write',
      'ou.user_id as member_user_id',
      'ou.email as member_email',
      'u.name as user_name',
      'u.email as user_email',
      'g.name as group_name',
      currentUserInGroup(eb.ref('ap.group_id'), currentUserId).as('current_user_in_group'),
    ])
    .where(`ap.${granted}`, '=', grantedId)
    .where((eb) => eb.or([eb('ap.organization_user_id', 'is not', null), eb('ap.group_id', 'is not', null)]))
    .orderBy('ap.creation_date')
    .orderBy('ap.id')
    .execute();
  return rows;
}

/** The machine-account policies on a project or secret, with the accounts' names. */
export async function serviceAccountPoliciesOn(db: Executor, granted: 'granted_project_id' | 'granted_secret_id', grantedId: string) {
  return db
    .selectFrom('access_policies as ap')
    .innerJoin('service_accounts as sa', 'sa.id', 'ap.service_account_id')
    .select(['ap.service_account_id as id', 'sa.name', 'ap.read', 'ap.write'])
    .where(`ap.${granted}`, '=', grantedId)
    .orderBy('ap.creation_date')
    .orderBy('ap.id')
    .execute();
}

/** The projects a machine account is granted, with their names. */
export async function grantedProjectsOf(db: Executor, serviceAccountId: string) {
  return db
    .selectFrom('access_policies as ap')
    .innerJoin('projects as p', 'p.id', 'ap.granted_project_id')
    .select(['p.id', 'p.name', 'ap.read', 'ap.write'])
    .where('ap.service_account_id', '=', serviceAccountId)
    .orderBy('ap.creation_date')
    .orderBy('ap.id')
    .execute();
}

type OrgTable = 'organization_users' | 'groups' | 'service_accounts' | 'projects';

/** How many of `ids` are rows of `table` in the organization. */
export async function countInOrganization(db: Executor, table: OrgTable, organizationId: string, ids: readonly string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const row = await db
    .selectFrom(table)
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('id', 'in', [...ids])
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Confirmed members with Secrets Manager access: those a policy can usefully name. */
export async function memberGrantees(db: Executor, organizationId: string) {
  return confirmedInEnabledOrganizations(db)
    .innerJoin('users as u', 'u.id', 'ou.user_id')
    .select(['ou.id', 'ou.user_id', 'u.name', 'u.email'])
    .where('ou.organization_id', '=', organizationId)
    .where('ou.access_secrets_manager', '=', true)
    .orderBy('ou.creation_date')
    .orderBy('ou.id')
    .execute();
}

export async function groupGrantees(db: Executor, organizationId: string, currentUserId: string | null) {
  return db
    .selectFrom('groups as g')
    .select((eb) => [
      'g.id',
      'g.name',
      currentUserInGroup(eb.ref('g.id'), currentUserId).as('current_user_in_group'),
    ])
    .where('g.organization_id', '=', organizationId)
    .orderBy('g.creation_date')
    .orderBy('g.id')
    .execute();
}

/** The organization's machine accounts or projects, all or only `ids`. */
export async function namedRowsOf(db: Executor, table: 'service_accounts' | 'projects', organizationId: string, ids: readonly string[] | 'all') {
  if (ids !== 'all' && ids.length === 0) return [];
  let query = db.selectFrom(table).select(['id', 'name']).where('organization_id', '=', organizationId);
  if (ids !== 'all') query = query.where('id', 'in', [...ids]);
  return query.orderBy('creation_date').orderBy('id').execute();
}

export async function deletePolicies(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('access_policies').where('id', 'in', [...ids]).execute();
}

export async function setPolicyRights(db: Executor, ids: readonly string[], rights: { read: boolean; write: boolean }, now: string): Promise<void> {
  if (ids.length === 0) return;
  await db.updateTable('access_policies').set({ read: rights.read, write: rights.write, revision_date: now }).where('id', 'in', [...ids]).execute();
}

export async function insertPolicies(db: Executor, rows: readonly Insertable<AccessPoliciesTable>[]): Promise<void> {
  for (const part of chunks(rows, INSERT_BATCH)) await db.insertInto('access_policies').values(part).execute();
}
