import type { Selectable } from 'kysely';
import type { PoliciesTable } from '../../db/schema.js';
import type { Executor } from '../events/audit-log.js';
import type { PolicyType } from './policy-type.js';

export type PolicyRow = Selectable<PoliciesTable>;

export async function findPolicy(db: Executor, organizationId: string, type: PolicyType): Promise<PolicyRow | undefined> {
  return db.selectFrom('policies').selectAll().where('organization_id', '=', organizationId).where('type', '=', type).executeTakeFirst();
}

/** Enabled policies of one type across the organizations a user is a member of (any status). */
export async function enabledPoliciesForUser(db: Executor, userId: string, type: PolicyType): Promise<PolicyRow[]> {
  return db
    .selectFrom('policies')
    .innerJoin('organization_users', 'organization_users.organization_id', 'policies.organization_id')
    .selectAll('policies')
    .where('organization_users.user_id', '=', userId)
    .where('policies.type', '=', type)
    .where('policies.enabled', '=', true)
    .execute();
}
