import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { findOrganization } from '../../platform/access/memberships.js';
import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import { revokeMemberships } from '../../platform/access/revocation.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { noPushRegistrations, type PushRegistrations } from '../../platform/push/push-registrations.js';
import { findPolicy } from '../policies/policies.repository.js';
import { PolicyType } from '../policies/policy-type.js';
import { lockOrganization } from './member-rules.js';
import { findMember } from './members.repository.js';

const NOT_ELIGIBLE =
  'User is not eligible for self-revocation. The organization data ownership policy must be enabled and the user must be a confirmed member.';

/**
 * A member who declines to move their personal items into the organization, as the Enforce
 * organization data ownership policy asks on their next login, revokes their own membership.
 */
export function createRevokeSelf({ db, clock, audit, pushes, registrations = noPushRegistrations }: { db: Db; clock: Clock; audit: AuditLog; pushes: Pushes; registrations?: PushRegistrations }) {
  return {
    /**
     * Only where the policy binds the caller: it is on in an organization that uses policies, and
     * the caller is a confirmed member other than an owner or admin (whom the policy exempts, so
     * the last owner never gets this far). The revocation writer records OrganizationUser_SelfRevoked.
     */
    async revokeSelf(actor: MemberCaller, organizationId: string): Promise<void> {
      const revoked = await db.transaction().execute(async (tx) => {
        await lockOrganization(tx, organizationId);
        const member = await findMember(tx, organizationId, actor.membership.id);
        if (!member) throw new NotFound('Organization user not found.');
        const org = await findOrganization(tx, organizationId);
        const policy = await findPolicy(tx, organizationId, PolicyType.OrganizationDataOwnership);
        const exempt = member.type === OrganizationUserType.Owner || member.type === OrganizationUserType.Admin;
        const bound = Boolean(org?.enabled && org.use_policies && policy?.enabled) && member.status === OrganizationUserStatusType.Confirmed && !exempt;
        if (!bound) throw new BadRequest(NOT_ELIGIBLE);
        const now = clock.now().toISOString();
        await revokeMemberships(tx, audit, actor.client, [{ organizationUserId: member.id, organizationId, userId: member.user_id }], {
          reason: 'self',
          by: actingOf(actor.membership),
          now,
        });
        return { userId: member.user_id, now };
      });
      // The member's other apps drop the organization's keys and items.
      if (revoked.userId) {
        pushes.send([userPush(PushType.SyncOrgKeys, revoked.userId, new Date(revoked.now))]);
        registrations.leftOrganization(organizationId, [revoked.userId]);
      }
    },
  };
}
