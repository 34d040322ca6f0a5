import type { Executor } from '../../db/database.js';
import type { ClientContext } from '../../http/request-context.js';
import type { AuditLog } from '../audit/audit-log.js';
import { EventType, type EventSystemUser } from '../audit/event-type.js';
import { OrganizationUserStatusType } from './roles.js';
import { touchAccountRevisions } from '../auth/users.repository.js';

/** A membership to revoke: its organization names the audit event, its user (if any) is made to sync. */
export interface MembershipToRevoke {
  organizationUserId: string;
  organizationId: string;
  userId: string | null;
}

/**
 * Why memberships are revoked, which is the event recorded for each: a member manager's revoke
 * (OrganizationUser_Revoked, 1511), the Two-step login policy's (…_TwoFactorNonCompliance, 1520)
 * or a member's own, declining the Enforce organization data ownership policy (…_SelfRevoked, 1518).
 */
export type RevocationReason = 'manager' | 'two-step-login-policy' | 'self';

const EVENT_OF: Record<RevocationReason, EventType> = {
  manager: EventType.OrganizationUser_Revoked,
  'two-step-login-policy': EventType.OrganizationUser_Revoked_TwoFactorNonCompliance,
  self: EventType.OrganizationUser_SelfRevoked,
};

/** The official RevocationReason stored with each revoked member, which the web vault shows. */
const STORED_REASON_OF: Record<RevocationReason, number> = {
  manager: 1,
  'two-step-login-policy': 2,
  self: 3,
};

/** Who revokes, as the audit log records it: a user (`actingOf` a membership) or the system. */
export interface Revoker {
  actingUserId: string | null;
  systemUser: EventSystemUser | null;
}

/**
 * The one writer of a revocation, in the caller's transaction `tx`: the memberships become
 * Revoked (their revision date `now`) in one statement, their users' account revisions move so
 * their clients sync the organization away, and one event per membership records the reason and
 * who revoked. The caller has checked that each may be revoked, and after commit pushes
 * SyncOrgKeys to the users, as for any change of a member's access.
 */
export async function revokeMemberships(
  tx: Executor,
  audit: AuditLog,
  client: ClientContext | null,
  memberships: readonly MembershipToRevoke[],
  revocation: { reason: RevocationReason; by: Revoker; now: string },
): Promise<void> {
  if (memberships.length === 0) return;
  const { reason, by, now } = revocation;
  await tx
    .updateTable('organization_users')
    .set({ status: OrganizationUserStatusType.Revoked, revocation_reason: STORED_REASON_OF[reason], revision_date: now })
    .where(
      'id',
      'in',
      memberships.map((m) => m.organizationUserId),
    )
    .execute();
  await touchAccountRevisions(tx, [...new Set(memberships.flatMap((m) => (m.userId ? [m.userId] : [])))], now);
  await audit.record(
    tx,
    client,
    memberships.map((m) => ({ type: EVENT_OF[reason], organizationId: m.organizationId, organizationUserId: m.organizationUserId, ...by })),
  );
}
