import type { Executor } from '../../db/database.js';
import type { OrganizationRow } from '../../platform/access/memberships.js';
import type { ClientContext } from '../../http/request-context.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType, type EventSystemUser } from '../../platform/audit/event-type.js';
import { findPolicy } from '../policies/policies.repository.js';
import { PolicyType } from '../policies/policy-type.js';
import { deleteGrantsOfUsers } from './emergency-access.repository.js';

/**
 * Joining (accepting or being confirmed into) an organization that uses Automatic User
 * Confirmation ends every emergency access grant of the user, as grantor and as grantee, as the
 * official server does: such an organization confirms members without an admin, and emergency
 * access would let someone outside it into a member's account. Each grant ends with its event,
 * in the caller's transaction.
 */
export async function endGrantsOnJoin(
  tx: Executor,
  audit: AuditLog,
  client: ClientContext | null,
  org: Pick<OrganizationRow, 'id' | 'use_policies'>,
  userIds: readonly string[],
  acting: { actingUserId: string | null; systemUser?: EventSystemUser | null },
): Promise<void> {
  if (!org.use_policies || userIds.length === 0) return;
  if (!(await findPolicy(tx, org.id, PolicyType.AutomaticUserConfirmation))?.enabled) return;
  const removed = await deleteGrantsOfUsers(tx, userIds);
  if (removed.length > 0) await audit.record(tx, client, removed.map((grant) => ({ type: EventType.EmergencyAccess_Removed, userId: grant.grantor_id, ...acting })));
}
