import { actingOf, type MemberCaller } from '../../platform/access/org-access.js';
import { BadRequest, NotFound } from '../../http/errors.js';
import { groupBy } from '../../shared/group-by.js';
import { touchAccountRevision, touchAccountRevisions } from '../../platform/auth/users.repository.js';
import type { AuditEvent } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { OrganizationUserStatusType, OrganizationUserType } from '../../platform/access/roles.js';
import { userPush } from '../../platform/push/push-messages.js';
import { PushType, type Pushes } from '../../platform/push/pushes.js';
import { noPushRegistrations, type PushRegistrations } from '../../platform/push/push-registrations.js';
import { createConfirmMembers } from './confirm-members.js';
import { createInviteMembers, type InviteDeps } from './invite-members.js';
import { assertCanManage, joinPolicyError, lockOrganization, manageError, ownGroupsError, seatError, smSeatError, validateAssignment, validateGroups } from './member-rules.js';
import {
  collectionsOfMembers,
  countConfirmedOwnersExcept,
  findMember,
  findMembers,
  groupsOfMembers,
  listMembersWithUsers,
  replaceMemberCollections,
  replaceMemberGroups,
  updateMember,
  type MemberRow,
} from './members.repository.js';
import {
  bulkResult,
  toCollectionAccess,
  toMemberDetails,
  toMemberUserDetails,
  toMiniDetails,
  type BulkResult,
  type CollectionAccessResponse,
  type MemberDetails,
  type MemberUserDetails,
  type MiniDetails,
  type UpdateBody,
} from './members.schemas.js';
import { type OrganizationRow, findOrganization, deleteMembership } from '../../platform/access/memberships.js';
import { revokeMemberships } from '../../platform/access/revocation.js';
import { createSecretsManagerAccess } from './secrets-manager-access.js';
import { createRevokeSelf } from './revoke-self.js';
import { createDefaultCollections } from './default-collections.js';

/**
 * `pushes`: SyncOrgKeys to each member whose access a confirm, revoke, restore or removal changed;
 * `registrations`: their phones join or leave the organization's pushes at the mobile relay.
 */
export type MemberServiceDeps = InviteDeps & { pushes: Pushes; registrations?: PushRegistrations };

const LAST_OWNER = 'Organization must have at least one confirmed owner.';
const NOT_FOUND = 'User not found.';

/**
 * A bulk state change: each id is checked in order (a check sees the ids accepted before it,
 * so a batch cannot remove the last owner one by one), then the accepted ones are written in
 * one transaction with their audit events.
 */
type Check = (tx: Executor, member: MemberRow, accepted: readonly MemberRow[]) => Promise<string | null>;
type Write = (tx: Executor, accepted: readonly MemberRow[], now: string) => Promise<void>;
type Apply = (tx: Executor, member: MemberRow, now: string) => Promise<void>;

export function createMemberService(deps: MemberServiceDeps) {
  const { db, clock, audit } = deps;
  const registrations = deps.registrations ?? noPushRegistrations;
  const invites = createInviteMembers(deps);
  const confirms = createConfirmMembers(deps);
  const secretsManager = createSecretsManagerAccess(deps);
  const selfRevocation = createRevokeSelf(deps);

  async function organizationOrThrow(organizationId: string): Promise<OrganizationRow> {
    const org = await findOrganization(db, organizationId);
    if (!org) throw new NotFound();
    return org;
  }

  async function memberOrThrow(organizationId: string, id: string): Promise<MemberRow> {
    const member = await findMember(db, organizationId, id);
    if (!member) throw new NotFound();
    return member;
  }

  /**
   * Runs a member command over ids, in one transaction that holds the organization's lock, so
   * the seat and last-owner checks still hold when the change is written.
   */
  async function bulk(organizationId: string, ids: readonly string[], check: Check, write: Write, relay: 'joined' | 'left'): Promise<BulkResult[]> {
    const normalized = [...new Set(ids.map((id) => id.toLowerCase()))];
    const { results, changed } = await db.transaction().execute(async (tx) => {
      await lockOrganization(tx, organizationId);
      const found = new Map((await findMembers(tx, organizationId, normalized)).map((m) => [m.id, m]));
      const results: BulkResult[] = [];
      const accepted: MemberRow[] = [];
      for (const id of normalized) {
        const member = found.get(id);
        const error = member ? await check(tx, member, accepted) : NOT_FOUND;
        if (!error && member) accepted.push(member);
        results.push(bulkResult(id, error ?? ''));
      }
      if (accepted.length === 0) return { results, changed: null };
      const now = clock.now().toISOString();
      await write(tx, accepted, now);
      return { results, changed: { users: accepted.flatMap((m) => (m.user_id ? [m.user_id] : [])), now } };
    });
    if (changed) {
      deps.pushes.send(changed.users.map((userId) => userPush(PushType.SyncOrgKeys, userId, new Date(changed.now))));
      if (relay === 'joined') registrations.joinedOrganization(organizationId, changed.users);
      else registrations.leftOrganization(organizationId, changed.users);
    }
    return results;
  }

  /** A write of restore and remove: each member's change, their account revision, `event` for each. */
  function eachMember(actor: MemberCaller, organizationId: string, event: EventType, apply: Apply): Write {
    return async (tx, accepted, now) => {
      for (const member of accepted) await apply(tx, member, now);
      await touchAccountRevisions(tx, accepted.flatMap((member) => (member.user_id ? [member.user_id] : [])), now);
      const events: AuditEvent[] = accepted.map((member) => ({ type: event, organizationId, organizationUserId: member.id, ...actingOf(actor.membership) }));
      await audit.record(tx, actor.client, events);
    };
  }

  /** One id through a bulk command: an unknown id is a 404, any other refusal a 400. */
  async function single(run: (ids: string[]) => Promise<BulkResult[]>, organizationId: string, id: string): Promise<void> {
    await memberOrThrow(organizationId, id);
    const [result] = await run([id]);
    if (result?.error) throw new BadRequest(result.error);
  }

  async function lastOwnerLeaving(tx: Executor, organizationId: string, member: MemberRow, accepted: readonly MemberRow[]): Promise<boolean> {
    if (member.type !== OrganizationUserType.Owner || member.status !== OrganizationUserStatusType.Confirmed) return false;
    return (await countConfirmedOwnersExcept(tx, organizationId, [member.id, ...accepted.map((m) => m.id)])) === 0;
  }

  function revokeMany(actor: MemberCaller, organizationId: string, ids: readonly string[]): Promise<BulkResult[]> {
    return bulk(
      organizationId,
      ids,
      async (tx, member, accepted) => {
        if (member.user_id === actor.membership.userId) return 'You cannot revoke yourself.';
        const role = manageError(actor.membership, member.type, 'revoke');
        if (role) return role;
        if (member.status === OrganizationUserStatusType.Revoked) return 'Already revoked.';
        if (member.status !== OrganizationUserStatusType.Confirmed) return 'Only confirmed members can be revoked.';
        return (await lastOwnerLeaving(tx, organizationId, member, accepted)) ? LAST_OWNER : null;
      },
      (tx, accepted, now) =>
        revokeMemberships(
          tx,
          audit,
          actor.client,
          accepted.map((member) => ({ organizationUserId: member.id, organizationId, userId: member.user_id })),
          { reason: 'manager', by: actingOf(actor.membership), now },
        ),
      // The official revoke leaves the relay alone; a revoked member gets nothing of the organization, so its phones leave too.
      'left',
    );
  }

  /**
   * `defaultCollectionName` (current web vaults): the encrypted "My Items" name for the restored
   * members whom the data ownership policy binds, who get that collection if they lack one.
   */
  async function restoreMany(actor: MemberCaller, organizationId: string, ids: readonly string[], defaultCollectionName?: string | null): Promise<BulkResult[]> {
    const org = await organizationOrThrow(organizationId);
    const restoreEach = eachMember(actor, organizationId, EventType.OrganizationUser_Restored, (tx, member, now) =>
      updateMember(tx, member.id, { status: OrganizationUserStatusType.Confirmed, revocation_reason: null, revision_date: now }),
    );
    return bulk(
      organizationId,
      ids,
      async (tx, member, accepted) => {
        if (member.user_id === actor.membership.userId) return 'You cannot restore yourself.';
        const role = manageError(actor.membership, member.type, 'restore');
        if (role) return role;
        if (member.status !== OrganizationUserStatusType.Revoked) return 'Already active.';
        // A revoked member frees a seat, and a Secrets Manager seat, so coming back needs them.
        const seats = await seatError(tx, org, accepted.length + 1);
        if (seats) return seats;
        const smSeats = member.access_secrets_manager ? await smSeatError(tx, org, accepted.filter((m) => m.access_secrets_manager).length + 1, deps.selfHosted) : null;
        if (smSeats) return smSeats;
        return member.user_id ? joinPolicyError(tx, org, member, member.user_id, 'confirm') : null;
      },
      async (tx, accepted, now) => {
        await restoreEach(tx, accepted, now);
        await createDefaultCollections(tx, org, accepted, defaultCollectionName, now);
      },
      'joined',
    );
  }

  function removeMany(actor: MemberCaller, organizationId: string, ids: readonly string[]): Promise<BulkResult[]> {
    return bulk(
      organizationId,
      ids,
      async (tx, member, accepted) => {
        if (member.user_id === actor.membership.userId) return 'You cannot remove yourself.';
        const role = manageError(actor.membership, member.type, 'remove');
        if (role) return role;
        return (await lastOwnerLeaving(tx, organizationId, member, accepted)) ? LAST_OWNER : null;
      },
      eachMember(actor, organizationId, EventType.OrganizationUser_Removed, (tx, member, now) => deleteMembership(tx, member.id, now)),
      // As the official RemoveOrganizationUserCommand.cs: delete-organization for the user's devices.
      'left',
    );
  }

  async function collectionsByMember(ids: readonly string[]): Promise<Map<string, CollectionAccessResponse[]>> {
    return groupBy(await collectionsOfMembers(db, ids), (r) => r.organization_user_id, toCollectionAccess);
  }

  async function groupsByMember(ids: readonly string[]): Promise<Map<string, string[]>> {
    return groupBy(await groupsOfMembers(db, ids), (r) => r.organization_user_id, (r) => r.group_id);
  }

  return {
    ...invites,
    ...confirms,
    enableSecretsManager: (_caller: MemberCaller, organizationId: string, ids: readonly string[]) => secretsManager.enable(organizationId, ids),

    /** Account-recovery managers without manageUsers see only the members they may recover: those enrolled in account recovery. */
    async list({ membership }: MemberCaller, organizationId: string, opts: { includeGroups: boolean; includeCollections: boolean }): Promise<MemberUserDetails[]> {
      const all = await listMembersWithUsers(db, organizationId);
      const rows = membership.rights.has('manageUsers') ? all : all.filter((row) => row.reset_password_key !== null);
      const ids = rows.map((r) => r.id);
      const collections = opts.includeCollections ? await collectionsByMember(ids) : new Map<string, CollectionAccessResponse[]>();
      const groups = opts.includeGroups ? await groupsByMember(ids) : new Map<string, string[]>();
      return rows.map((row) => toMemberUserDetails(row, collections.get(row.id) ?? [], groups.get(row.id) ?? []));
    },

    async get(_caller: MemberCaller, organizationId: string, id: string, includeGroups: boolean): Promise<MemberDetails> {
      const [row] = await listMembersWithUsers(db, organizationId, [id]);
      if (!row) throw new NotFound();
      const collections = (await collectionsByMember([id])).get(id) ?? [];
      const groups = includeGroups ? ((await groupsByMember([id])).get(id) ?? []) : null;
      return toMemberDetails(row, collections, groups);
    },

    async miniDetails(_caller: MemberCaller, organizationId: string): Promise<MiniDetails[]> {
      return (await listMembersWithUsers(db, organizationId)).map(toMiniDetails);
    },

    async groupIds(_caller: MemberCaller, organizationId: string, id: string): Promise<string[]> {
      await memberOrThrow(organizationId, id);
      return (await groupsByMember([id])).get(id) ?? [];
    },

    /** Updates a member; `externalId`, when present (the public API's), replaces the stored one. */
    async update(actor: MemberCaller, organizationId: string, id: string, body: UpdateBody & { externalId?: string | null }): Promise<void> {
      const org = await organizationOrThrow(organizationId);
      const member = await memberOrThrow(organizationId, id);
      assertCanManage(actor.membership, member.type, 'configure');
      assertCanManage(actor.membership, body.type, 'configure');
      const assignment = await validateAssignment(db, org, actor.membership, body, Boolean(member.access_all));
      const before = (await groupsByMember([id])).get(id) ?? [];
      const ownGroups = assignment.groups ? await ownGroupsError(db, actor.membership, id, assignment.groups, before) : null;
      if (ownGroups) throw BadRequest.field('groups', ownGroups);
      const groupsChanged = assignment.groups !== undefined && (assignment.groups.length !== before.length || assignment.groups.some((g) => !before.includes(g)));
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await lockOrganization(tx, organizationId);
        if (assignment.type !== OrganizationUserType.Owner && (await lastOwnerLeaving(tx, organizationId, member, []))) throw new BadRequest(LAST_OWNER);
        // Giving a member Secrets Manager takes one of its seats, unless a revoked member's; read
        // again under the lock, as a restore or another edit may have changed the member since.
        const current = (await findMember(tx, organizationId, id)) ?? member;
        const takesSmSeat = assignment.accessSecretsManager === true && !current.access_secrets_manager && current.status !== OrganizationUserStatusType.Revoked;
        const smSeats = takesSmSeat ? await smSeatError(tx, org, 1, deps.selfHosted) : null;
        if (smSeats) throw new BadRequest(smSeats);
        await updateMember(tx, id, {
          type: assignment.type,
          permissions: assignment.permissions,
          ...(assignment.accessAll !== undefined ? { access_all: assignment.accessAll } : {}),
          ...(assignment.accessSecretsManager !== undefined ? { access_secrets_manager: assignment.accessSecretsManager } : {}),
          ...(body.externalId !== undefined ? { external_id: body.externalId } : {}),
          revision_date: now,
        });
        if (assignment.collections) await replaceMemberCollections(tx, id, assignment.collections);
        if (assignment.groups && groupsChanged) await replaceMemberGroups(tx, id, assignment.groups);
        if (member.user_id) await touchAccountRevision(tx, member.user_id, now);
        const event = { organizationId, organizationUserId: id, ...actingOf(actor.membership) };
        await audit.record(tx, actor.client, [
          { type: EventType.OrganizationUser_Updated, ...event },
          ...(groupsChanged ? [{ type: EventType.OrganizationUser_UpdatedGroups, ...event }] : []),
        ]);
      });
    },

    async updateGroups(actor: MemberCaller, organizationId: string, id: string, groupIds: readonly string[]): Promise<void> {
      const member = await memberOrThrow(organizationId, id);
      assertCanManage(actor.membership, member.type, 'configure');
      const groups = await validateGroups(db, await organizationOrThrow(organizationId), groupIds, 'groupIds');
      const ownGroups = await ownGroupsError(db, actor.membership, id, groups, (await groupsByMember([id])).get(id) ?? []);
      if (ownGroups) throw BadRequest.field('groupIds', ownGroups);
      const now = clock.now().toISOString();
      await db.transaction().execute(async (tx) => {
        await replaceMemberGroups(tx, id, groups);
        await updateMember(tx, id, { revision_date: now });
        if (member.user_id) await touchAccountRevision(tx, member.user_id, now);
        await audit.record(tx, actor.client, {
          type: EventType.OrganizationUser_UpdatedGroups,
          organizationId,
          organizationUserId: id,
          ...actingOf(actor.membership),
        });
      });
    },

    revoke: (actor: MemberCaller, organizationId: string, id: string) => single((ids) => revokeMany(actor, organizationId, ids), organizationId, id),
    revokeMany,
    revokeSelf: (actor: MemberCaller, organizationId: string) => selfRevocation.revokeSelf(actor, organizationId),
    restore: (actor: MemberCaller, organizationId: string, id: string, defaultCollectionName?: string | null) =>
      single((ids) => restoreMany(actor, organizationId, ids, defaultCollectionName), organizationId, id),
    restoreMany,
    remove: (actor: MemberCaller, organizationId: string, id: string) => single((ids) => removeMany(actor, organizationId, ids), organizationId, id),
    removeMany,
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
