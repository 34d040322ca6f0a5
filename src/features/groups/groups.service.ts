import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, Forbidden, NotFound } from '../../http/errors.js';
import { accessInputs } from '../collections/access-input.js';
import { distinctIds } from '../../http/ids.js';
import { groupBy } from '../../shared/group-by.js';
import { canEdit, collectionGrants, type CollectionActor } from '../../platform/access/grants.js';
import {
  accessOf,
  collectionsOfOrganization,
  findOrganization,
  membersOfOrganization,
  type AccessInput,
} from '../collections/collections.repository.js';
import type { AuditEvent, AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { actingOf, type MemberCaller, type Membership } from '../../platform/access/org-access.js';
import {
  addGroupMembers,
  collectionsOfGroups,
  deleteGroups,
  findGroup,
  insertGroup,
  listGroups,
  memberIdsOfGroup,
  removeGroupMembers,
  replaceGroupCollections,
  updateGroup,
  type GroupRow,
} from './groups.repository.js';
import { toGroupDetails, toGroupResponse, type CreateGroupBody, type UpdateGroupBody } from './groups.schemas.js';
import { touchOrganizationMembers } from '../../platform/access/memberships.js';

/** What a create or update asks for, with every field settled. */
interface GroupInput {
  name: string;
  accessAll: boolean;
  externalId: string | null;
  collections: AccessInput[];
  users: string[] | null;
}

function collectionInputs(list: CreateGroupBody['collections']): AccessInput[] {
  return accessInputs(list ?? [], 'collections');
}

/** The organization settings a group save reads. */
type OrganizationRow = NonNullable<Awaited<ReturnType<typeof findOrganization>>>;

export function createGroupService(deps: { db: Db; audit: AuditLog; clock: Clock }) {
  const { db, audit, clock } = deps;

  async function groupOrThrow(executor: Executor, membership: Membership, id: string): Promise<GroupRow> {
    const group = await findGroup(executor, membership.organizationId, id);
    if (!group) throw new NotFound();
    return group;
  }

  async function requireGroupsFeature(executor: Executor, organizationId: string) {
    const org = await findOrganization(executor, organizationId);
    if (!org) throw new NotFound();
    if (!org.use_groups) throw new BadRequest('This organization cannot use groups.');
    return org;
  }

  /**
   * The rules of saving a group: members and collections of this organization only; access to
   * all collections only from someone who may edit them all; collection access only for
   * collections the caller may edit (unless admins reach every collection and the caller manages
   * groups); and nobody adds themself to a group that lacks access to all collections.
   */
  async function checkSave(
    executor: Executor,
    membership: Membership,
    input: GroupInput,
    current: { group: GroupRow; members: string[] } | null,
  ): Promise<OrganizationRow> {
    const org = await requireGroupsFeature(executor, membership.organizationId);
    const organizationId = membership.organizationId;

    if (input.users?.length) {
      const known = await membersOfOrganization(executor, organizationId, input.users);
      const stranger = input.users.find((id) => !known.has(id));
      if (stranger) throw BadRequest.field('users', `Member ${stranger} does not belong to this organization.`);
      if (!input.accessAll && input.users.includes(membership.id) && !current?.members.includes(membership.id)) {
        throw BadRequest.field('users', 'You cannot add yourself to groups.');
      }
    }
    if (input.collections.length) {
      const known = await collectionsOfOrganization(executor, organizationId, input.collections.map((c) => c.id));
      const stranger = input.collections.find((c) => !known.has(c.id));
      if (stranger) throw BadRequest.field('collections', `Collection ${stranger.id} does not belong to this organization.`);
    }
    if (input.accessAll && !current?.group.access_all && !membership.rights.has('editAnyCollection')) {
      throw new Forbidden('Only members who may edit any collection can give a group access to all collections.');
    }

    const denied = await uneditable(executor, membership, org, input.collections.map((c) => c.id));
    if (denied.size > 0) throw new Forbidden('You do not have permission to grant access to one of these collections.');
    return org;
  }

  /**
   * The collections among `ids` whose group access the caller may not change: all may, when
   * admins reach every collection and the caller manages groups; otherwise those they may edit.
   */
  async function uneditable(executor: Executor, membership: Membership, org: OrganizationRow, ids: readonly string[]): Promise<Set<string>> {
    const allowAdmin = Boolean(org.allow_admin_access_to_all_collection_items);
    if (ids.length === 0 || (allowAdmin && membership.rights.has('manageGroups'))) return new Set();
    const actor: CollectionActor = {
      membership,
      settings: {
        limitCollectionCreation: Boolean(org.limit_collection_creation),
        limitCollectionDeletion: Boolean(org.limit_collection_deletion),
        allowAdminAccessToAllCollectionItems: allowAdmin,
      },
      grants: await collectionGrants(executor, membership),
    };
    const access = await accessOf(executor, ids);
    const managed = new Set([...access.users, ...access.groups].filter((a) => Boolean(a.manage)).map((a) => a.collection_id));
    return new Set(ids.filter((id) => !canEdit(actor, id, !managed.has(id))));
  }

  function membershipEvents(membership: Membership, changed: readonly string[]): AuditEvent[] {
    return changed.map((organizationUserId) => ({
      type: EventType.OrganizationUser_UpdatedGroups,
      organizationUserId,
      organizationId: membership.organizationId,
      ...actingOf(membership),
    }));
  }

  function groupEvent(membership: Membership, type: EventType, groupId: string): AuditEvent {
    return { type, groupId, organizationId: membership.organizationId, ...actingOf(membership) };
  }

  /** Sets the group's members to `users`; returns the members added or removed. */
  async function setMembers(executor: Executor, groupId: string, before: readonly string[], users: readonly string[]): Promise<string[]> {
    const was = new Set(before);
    const now = new Set(users);
    const added = users.filter((id) => !was.has(id));
    const removed = before.filter((id) => !now.has(id));
    await removeGroupMembers(executor, groupId, removed);
    await addGroupMembers(executor, groupId, added);
    return [...added, ...removed];
  }

  async function finish(executor: Executor, { membership, client }: MemberCaller, events: AuditEvent[]): Promise<void> {
    await audit.record(executor, client, events);
    await touchOrganizationMembers(executor, [membership.organizationId], clock.now().toISOString());
  }

  return {
    /**
     * Members who assign collection access need the group names (the official
     * OrganizationCollectionManagementAccess rule): whoever may create a collection, which with
     * creation open is every member; member and group managers and report readers; and whoever
     * edits or manages a collection.
     */
    async list({ membership }: MemberCaller) {
      const r = membership.rights;
      const org = await findOrganization(db, membership.organizationId);
      if (!org) throw new NotFound();
      const allowed =
        !org.limit_collection_creation ||
        r.has('createNewCollections') ||
        r.has('manageGroups') ||
        r.has('manageUsers') ||
        r.has('accessReports') ||
        r.has('editAnyCollection') ||
        r.has('deleteAnyCollection') ||
        r.has('editAssignedCollections') ||
        [...(await collectionGrants(db, membership)).values()].some((g) => g.manage);
      if (!allowed) throw new Forbidden('You do not have permission to do this.');
      return (await listGroups(db, membership.organizationId)).map(toGroupResponse);
    },

    /** Group and member managers (the route's access rule). */
    async listDetails({ membership }: MemberCaller) {
      const groups = await listGroups(db, membership.organizationId);
      const access = await collectionsOfGroups(db, groups.map((g) => g.id));
      const byGroup = groupBy(access, (a) => a.group_id);
      return groups.map((g) => toGroupDetails(g, byGroup.get(g.id) ?? []));
    },

    async get({ membership }: MemberCaller, id: string) {
      return toGroupResponse(await groupOrThrow(db, membership, id));
    },

    async getDetails({ membership }: MemberCaller, id: string) {
      const group = await groupOrThrow(db, membership, id);
      return toGroupDetails(group, await collectionsOfGroups(db, [id]));
    },

    async members({ membership }: MemberCaller, id: string): Promise<string[]> {
      await groupOrThrow(db, membership, id);
      return memberIdsOfGroup(db, id);
    },

    async create(caller: MemberCaller, body: CreateGroupBody) {
      const { membership } = caller;
      const accessAll = body.accessAll ?? false;
      if (!accessAll && (body.collections === undefined || body.collections === null)) {
        throw BadRequest.field('collections', 'The collections field is required unless the group has access to all collections.');
      }
      const input: GroupInput = {
        name: body.name,
        accessAll,
        externalId: body.externalId ?? null,
        collections: collectionInputs(body.collections),
        users: distinctIds(body.users ?? [], 'users'),
      };
      return db.transaction().execute(async (tx) => {
        await checkSave(tx, membership, input, null);
        const now = clock.now().toISOString();
        const row: GroupRow = {
          id: randomUUID(),
          organization_id: membership.organizationId,
          name: input.name,
          access_all: input.accessAll,
          external_id: input.externalId,
          creation_date: now,
          revision_date: now,
        };
        await insertGroup(tx, row);
        await replaceGroupCollections(tx, row.id, input.collections);
        const changed = await setMembers(tx, row.id, [], input.users ?? []);
        await finish(tx, caller, [groupEvent(membership, EventType.Group_Created, row.id), ...membershipEvents(membership, changed)]);
        return toGroupResponse(row);
      });
    },

    async update(caller: MemberCaller, id: string, body: UpdateGroupBody) {
      const { membership } = caller;
      return db.transaction().execute(async (tx) => {
        const group = await groupOrThrow(tx, membership, id);
        const before = await memberIdsOfGroup(tx, id);
        const input: GroupInput = {
          name: body.name,
          accessAll: body.accessAll ?? Boolean(group.access_all),
          externalId: body.externalId === undefined ? group.external_id : body.externalId,
          collections: collectionInputs(body.collections),
          users: body.users === null ? null : distinctIds(body.users, 'users'),
        };
        const org = await checkSave(tx, membership, input, { group, members: before });
        const now = clock.now().toISOString();
        const values = { name: input.name, access_all: input.accessAll, external_id: input.externalId, revision_date: now };
        await updateGroup(tx, id, values);
        // A null collection list leaves the access as it is. Otherwise the list replaces it, but
        // access to collections the caller may not edit stays as it was (the body cannot name them).
        if (body.collections !== null) {
          const currentAccess = await collectionsOfGroups(tx, [id]);
          const kept = await uneditable(tx, membership, org, currentAccess.map((a) => a.collection_id));
          const keptAccess = currentAccess
            .filter((a) => kept.has(a.collection_id))
            .map((a) => ({ id: a.collection_id, readOnly: Boolean(a.read_only), hidePasswords: Boolean(a.hide_passwords), manage: Boolean(a.manage) }));
          await replaceGroupCollections(tx, id, [...input.collections, ...keptAccess]);
        }
        // A null member list leaves the members as they are (directory sync sends members separately).
        const changed = input.users ? await setMembers(tx, id, before, input.users) : [];
        await finish(tx, caller, [groupEvent(membership, EventType.Group_Updated, id), ...membershipEvents(membership, changed)]);
        return toGroupResponse({ ...group, ...values });
      });
    },

    async replaceMembers(caller: MemberCaller, id: string, users: readonly string[]): Promise<void> {
      const { membership } = caller;
      const ids = distinctIds(users, 'users');
      await db.transaction().execute(async (tx) => {
        const group = await groupOrThrow(tx, membership, id);
        const before = await memberIdsOfGroup(tx, id);
        await checkSave(tx, membership, { name: group.name, accessAll: Boolean(group.access_all), externalId: group.external_id, collections: [], users: ids }, { group, members: before });
        const changed = await setMembers(tx, id, before, ids);
        await finish(tx, caller, membershipEvents(membership, changed));
      });
    },

    async removeMember(caller: MemberCaller, id: string, organizationUserId: string): Promise<void> {
      const { membership } = caller;
      await db.transaction().execute(async (tx) => {
        await groupOrThrow(tx, membership, id);
        const before = await memberIdsOfGroup(tx, id);
        if (!before.includes(organizationUserId)) throw new NotFound();
        await removeGroupMembers(tx, id, [organizationUserId]);
        await finish(tx, caller, membershipEvents(membership, [organizationUserId]));
      });
    },

    /** Deletes groups of this organization; any id that is not one answers 404 and nothing is deleted. */
    async delete(caller: MemberCaller, ids: readonly string[]): Promise<void> {
      const { membership } = caller;
      const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
      await db.transaction().execute(async (tx) => {
        const groups = await listGroups(tx, membership.organizationId, unique);
        if (groups.length !== unique.length) throw new NotFound();
        await deleteGroups(tx, unique);
        await finish(tx, caller, unique.map((groupId) => groupEvent(membership, EventType.Group_Deleted, groupId)));
      });
    },
  };
}

export type GroupService = ReturnType<typeof createGroupService>;
