import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { isEncString } from '../../http/enc-string.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import { EventType } from '../../platform/audit/event-type.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { noPushRegistrations, type PushRegistrations } from '../../platform/push/push-registrations.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';
import { joinPolicyError, lockOrganization } from './member-rules.js';
import { findMembers, updateMember, type MemberRow } from './members.repository.js';
import { touchAccountRevisions } from '../../platform/auth/users.repository.js';
import { bulkResult, type BulkResult } from './members.schemas.js';
import { findOrganization } from '../../platform/access/memberships.js';
import { endGrantsOnJoin } from '../emergency-access/emergency-access-joins.js';
import { createDefaultCollections } from './default-collections.js';

const NOT_FOUND = 'User not found.';

function statusError(member: MemberRow): string | null {
  switch (member.status) {
    case OrganizationUserStatusType.Accepted:
      return member.user_id ? null : 'User not accepted.';
    case OrganizationUserStatusType.Invited:
      return 'User not accepted.';
    case OrganizationUserStatusType.Confirmed:
      return 'User already confirmed.';
    default:
      return 'User is revoked.';
  }
}

/** Confirming hands an accepted member the organization key (encrypted to their public key) and with it access. */
export function createConfirmMembers({ db, clock, audit, pushes, registrations = noPushRegistrations }: { db: Db; clock: Clock; audit: AuditLog; pushes: Pushes; registrations?: PushRegistrations }) {
  /**
   * Checks and writes in one transaction under the organization lock the other member commands
   * take, so two confirmations of one member (or a confirmation racing a revoke) cannot both pass.
   */
  async function confirmMany(actor: MemberCaller, organizationId: string, keys: readonly { id: string; key: string }[], defaultCollectionName?: string | null): Promise<BulkResult[]> {
    const { results, changed } = await db.transaction().execute(async (tx) => {
      await lockOrganization(tx, organizationId);
      const org = await findOrganization(tx, organizationId);
      if (!org) throw new NotFound();
      const found = new Map((await findMembers(tx, organizationId, keys.map((k) => k.id.toLowerCase()))).map((m) => [m.id, m]));
      const results: BulkResult[] = [];
      const confirmed: { member: MemberRow; key: string }[] = [];
      const confirmedIds = new Set<string>();
      for (const { id: raw, key } of keys) {
        const id = raw.toLowerCase();
        const member = found.get(id);
        let error = member ? statusError(member) : NOT_FOUND;
        if (!error && confirmedIds.has(id)) error = 'User already confirmed.';
        if (!error && !isEncString(key)) error = 'The key is not a valid encrypted string.';
        if (!error && member?.user_id) error = await joinPolicyError(tx, org, member, member.user_id, 'confirm');
        if (!error && member) {
          confirmed.push({ member, key });
          confirmedIds.add(id);
        }
        results.push(bulkResult(id, error ?? ''));
      }
      if (confirmed.length === 0) return { results, changed: null };
      const now = clock.now().toISOString();
      for (const { member, key } of confirmed) {
        await updateMember(tx, member.id, { status: OrganizationUserStatusType.Confirmed, key, email: null, revision_date: now });
      }
      await createDefaultCollections(tx, org, confirmed.map(({ member }) => member), defaultCollectionName, now);
      const users = confirmed.flatMap(({ member }) => (member.user_id ? [member.user_id] : []));
      await touchAccountRevisions(tx, users, now);
      await endGrantsOnJoin(tx, audit, actor.client, org, users, actingOf(actor.membership));
      await audit.record(
        tx,
        actor.client,
        confirmed.map(({ member }) => ({
          type: EventType.OrganizationUser_Confirmed,
          organizationId,
          organizationUserId: member.id,
          ...actingOf(actor.membership),
        })),
      );
      return { results, changed: { users, now } };
    });
    // The confirmed members' apps fetch the organization key and reconnect with the new membership.
    if (changed) {
      pushes.send(changed.users.map((userId) => userPush(PushType.SyncOrgKeys, userId, new Date(changed.now))));
      // Their phones join the organization's pushes at the relay. The official confirm sends
      // delete-organization here (ConfirmOrganizationUserCommand.cs), which reads as a slip: a
      // confirmed member is meant to get the organization's pushes.
      registrations.joinedOrganization(organizationId, changed.users);
    }
    return results;
  }

  return {
    async confirm(actor: MemberCaller, organizationId: string, id: string, key: string, defaultCollectionName?: string | null): Promise<void> {
      const [member] = await findMembers(db, organizationId, [id]);
      if (!member) throw new NotFound();
      const status = statusError(member);
      if (status) throw new BadRequest(status);
      if (!isEncString(key)) throw BadRequest.field('key', 'The key field is not a valid encrypted string.');
      const [result] = await confirmMany(actor, organizationId, [{ id, key }], defaultCollectionName);
      if (result?.error) throw new BadRequest(result.error);
    },
    confirmMany,
  };
}

export type ConfirmMembers = ReturnType<typeof createConfirmMembers>;
