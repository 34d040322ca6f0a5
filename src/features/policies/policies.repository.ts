import type { Selectable } from 'kysely';
import type { PoliciesTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import type { PolicyType } from './policy-type.js';

export type PolicyRow = Selectable<PoliciesTable>;

export async function findPolicy(db: Executor, organizationId: string, type: PolicyType): Promise<PolicyRow | undefined> {
  return db.selectFrom('policies').selectAll().where('organization_id', '=', organizationId).where('type', '=', type).executeTakeFirst();
}

export async function listPolicies(db: Executor, organizationId: string): Promise<PolicyRow[]> {
  return db.selectFrom('policies').selectAll().where('organization_id', '=', organizationId).orderBy('type').execute();
}

/** The organization a membership (in any status) belongs to, if it exists. */
export async function organizationOfMember(db: Executor, organizationUserId: string): Promise<string | undefined> {
  const row = await db.selectFrom('organization_users').select('organization_id').where('id', '=', organizationUserId).executeTakeFirst();
  return row?.organization_id;
}

export async function insertPolicy(db: Executor, row: PolicyRow): Promise<void> {
  await db.insertInto('policies').values(row).execute();
}

export async function updatePolicy(db: Executor, id: string, values: Pick<PolicyRow, 'enabled' | 'data' | 'revision_date'>): Promise<void> {
  await db.updateTable('policies').set(values).where('id', '=', id).execute();
}

/** Policies of the enabled organizations where the user's membership has one of `statuses`, with that status. */
export async function policiesOfMemberships(db: Executor, userId: string, statuses: readonly number[], type?: PolicyType): Promise<(PolicyRow & { member_status: number })[]> {
  let query = db
    .selectFrom('policies')
    .innerJoin('organization_users', 'organization_users.organization_id', 'policies.organization_id')
    .innerJoin('organizations', 'organizations.id', 'policies.organization_id')
    .selectAll('policies')
    .select('organization_users.status as member_status')
    .where('organization_users.user_id', '=', userId)
    .where('organization_users.status', 'in', statuses)
    .where('organizations.enabled', '=', true);
  if (type !== undefined) {
    query = query.where('policies.type', '=', type).where('policies.enabled', '=', true).where('organizations.use_policies', '=', true);
  }
  return query.orderBy('policies.organization_id').orderBy('policies.type').execute();
}

/**
 * Members of the organization (other than `exceptUserId`, owners, admins, invited and revoked
 * members) who also belong to another organization, where they are more than invited.
 */
export async function membersInOtherOrganizations(db: Executor, organizationId: string, exceptUserId: string, exemptTypes: readonly number[], skipStatuses: readonly number[], invited: number): Promise<string[]> {
  const rows = await db
    .selectFrom('organization_users as here')
    .innerJoin('organization_users as there', 'there.user_id', 'here.user_id')
    .innerJoin('users', 'users.id', 'here.user_id')
    .select('users.email')
    .distinct()
    .where('here.organization_id', '=', organizationId)
    .where('here.user_id', '!=', exceptUserId)
    .where('here.type', 'not in', exemptTypes)
    .where('here.status', 'not in', skipStatuses)
    .where('there.organization_id', '!=', organizationId)
    .where('there.status', '!=', invited)
    .orderBy('users.email')
    .execute();
  return rows.map((r) => r.email);
}

/**
 * The enabled policies of the given types that bind a user: those of enabled organizations with
 * policies where the user is an accepted or confirmed member other than Owner or Admin (the
 * official Send and single sign-on requirements exempt those roles). One query for all the types.
 */
export async function bindingPolicies(
  executor: Executor,
  userId: string,
  types: readonly PolicyType[],
): Promise<{ type: number; data: string | null; organizationId: string; identifier: string | null }[]> {
  if (types.length === 0) return [];
  return executor
    .selectFrom('policies')
    .innerJoin('organization_users', 'organization_users.organization_id', 'policies.organization_id')
    .innerJoin('organizations', 'organizations.id', 'policies.organization_id')
    .select(['policies.type', 'policies.data', 'organizations.id as organizationId', 'organizations.identifier'])
    .where('organization_users.user_id', '=', userId)
    .where('organization_users.status', 'in', [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed])
    .where('organization_users.type', 'not in', [OrganizationUserType.Owner, OrganizationUserType.Admin])
    .where('organizations.enabled', '=', true)
    .where('organizations.use_policies', '=', true)
    .where('policies.type', 'in', [...types])
    .where('policies.enabled', '=', true)
    .execute();
}
