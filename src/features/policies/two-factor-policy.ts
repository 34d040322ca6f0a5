import type { ClientContext } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventSystemUser } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { PolicyType } from './policy-type.js';
import { revokeMemberships } from '../../platform/access/revocation.js';
import { usersWithTwoFactor } from '../../platform/auth/two-factor-state.js';

/** A membership the two-step login policy took away. */
export interface Revocation {
  organizationId: string;
  organizationUserId: string;
  userId: string;
}

const BOUND = [OrganizationUserStatusType.Accepted, OrganizationUserStatusType.Confirmed];
const EXEMPT = [OrganizationUserType.Owner, OrganizationUserType.Admin];

/**
 * Revokes, in `tx`, the accepted and confirmed memberships the Two-step login policy (type 0)
 * binds and whose user has no enabled provider: in one organization when the policy is turned
 * on (`organizationId`), or everywhere for one user who just turned their last provider off
 * (`userId`). Owners and admins are exempt, as is the acting user turning the policy on.
 * The revocation writer records OrganizationUser_Revoked_TwoFactorNonCompliance (1520) per membership.
 */
export async function revokeNonCompliant(
  tx: Executor,
  audit: AuditLog,
  client: ClientContext | null,
  scope: { organizationId: string; actingUserId: string | null; systemUser?: number | null } | { userId: string },
  now: string,
): Promise<Revocation[]> {
  let query = tx
    .selectFrom('organization_users')
    .innerJoin('policies', (join) => join.onRef('policies.organization_id', '=', 'organization_users.organization_id').on('policies.type', '=', PolicyType.TwoFactorAuthentication))
    .innerJoin('organizations', 'organizations.id', 'organization_users.organization_id')
    .select(['organization_users.id', 'organization_users.organization_id', 'organization_users.user_id'])
    .where('policies.enabled', '=', true)
    .where('organizations.use_policies', '=', true)
    .where('organization_users.status', 'in', BOUND)
    .where('organization_users.type', 'not in', EXEMPT)
    .where('organization_users.user_id', 'is not', null);
  if ('userId' in scope) query = query.where('organization_users.user_id', '=', scope.userId);
  else {
    query = query.where('organization_users.organization_id', '=', scope.organizationId);
    if (scope.actingUserId) query = query.where('organization_users.user_id', '!=', scope.actingUserId);
  }
  const bound = (await query.execute()).filter((row): row is typeof row & { user_id: string } => row.user_id !== null);
  const compliant = await usersWithTwoFactor(tx, [...new Set(bound.map((row) => row.user_id))]);
  const revoked = bound.filter((row) => !compliant.has(row.user_id));
  const memberships = revoked.map((row) => ({ organizationId: row.organization_id, organizationUserId: row.id, userId: row.user_id }));
  const by = 'userId' in scope ? { actingUserId: null, systemUser: EventSystemUser.TwoFactorDisabled } : { actingUserId: scope.actingUserId, systemUser: scope.systemUser ?? null };
  await revokeMemberships(tx, audit, client, memberships, { reason: 'two-step-login-policy', by, now });
  return memberships;
}
