import { randomUUID } from 'node:crypto';
import type { Clock } from '../../shared/clock.js';
import type { Db } from '../../db/database.js';
import { BadRequest, Forbidden, NotFound } from '../../http/errors.js';
import { accessInputs } from './access-input.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import { isEncString } from '../../http/enc-string.js';
import type { AuditLog } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { actingOf, type MemberCaller, type Membership } from '../../platform/access/org-access.js';
import {
  canCreate,
  canDelete,
  canEdit,
  canEditAny,
  canRead,
  canReadAll,
  canReadAllWithAccess,
  canReadWithAccess,
  canSee,
  collectionGrants,
  collectionsForUser,
  manages,
  type CollectionActor,
} from '../../platform/access/grants.js';
import {
  accessOf,
  countCollections,
  deleteCollections,
  findCollection,
  findOrganization,
  groupsOfOrganization,
  insertCollection,
  listCollections,
  membersOfOrganization,
  replaceCollectionGroups,
  replaceCollectionUsers,
  updateCollection,
  type AccessInput,
  type AccessRow,
  type CollectionRow,
} from './collections.repository.js';
import {
  toAccessSelection,
  toCollectionAccessDetails,
  toCollectionDetails,
  toCollectionResponse,
  type AccessSelection,
  type AccessSelectionResponse,
  type CollectionAccessDetailsResponse,
  type CollectionDetailsResponse,
  type CreateCollectionBody,
  type UpdateCollectionBody,
  type BulkAccessBody,
} from './collections.schemas.js';
import { touchOrganizationMembers } from '../../platform/access/memberships.js';

/** Sync and `GET /collections`: every collection the user reaches, with its computed access. */
export async function collectionDetailsForUser(db: Executor, userId: string): Promise<CollectionDetailsResponse[]> {
  const rows = await collectionsForUser(db, userId);
  return rows.map(({ row, grant }) => toCollectionDetails(row, grant));
}

/** The most access rows one bulk-access request may write (collections × members and groups). */
export const BULK_ACCESS_ROWS = 50_000;

function accessInputOf(row: AccessRow): AccessInput {
  return { id: row.id, readOnly: Boolean(row.read_only), hidePasswords: Boolean(row.hide_passwords), manage: Boolean(row.manage) };
}

/** `current` with each of `added` put in (replacing the same member's or group's access). */
function withAccess(current: readonly AccessInput[], added: readonly AccessInput[]): AccessInput[] {
  const byId = new Map(current.map((a) => [a.id, a]));
  for (const a of added) byId.set(a.id, a);
  return [...byId.values()];
}

function normalizeAccess(list: readonly AccessSelection[] | null | undefined, field: string): AccessInput[] | undefined {
  return list === undefined || list === null ? undefined : accessInputs(list, field);
}

export function createCollectionService(deps: { db: Db; audit: AuditLog; clock: Clock }) {
  const { db, audit, clock } = deps;

  async function actorFor(executor: Executor, membership: Membership): Promise<CollectionActor & { maxCollections: number | null; useGroups: boolean }> {
    const org = await findOrganization(executor, membership.organizationId);
    if (!org) throw new NotFound();
    return {
      membership,
      settings: {
        limitCollectionCreation: Boolean(org.limit_collection_creation),
        limitCollectionDeletion: Boolean(org.limit_collection_deletion),
        allowAdminAccessToAllCollectionItems: Boolean(org.allow_admin_access_to_all_collection_items),
      },
      grants: await collectionGrants(executor, membership),
      maxCollections: org.max_collections,
      useGroups: Boolean(org.use_groups),
    };
  }

  function accessByCollection(rows: { users: AccessRow[]; groups: AccessRow[] }, id: string) {
    return { users: rows.users.filter((r) => r.collection_id === id), groups: rows.groups.filter((r) => r.collection_id === id) };
  }

  function unmanagedOf(access: { users: AccessRow[]; groups: AccessRow[] }): boolean {
    return !access.users.some((u) => Boolean(u.manage)) && !access.groups.some((g) => Boolean(g.manage));
  }

  /** The collection if the caller may see it; 404 otherwise, exactly as for an unknown id. */
  async function visibleCollection(executor: Executor, actor: CollectionActor, id: string): Promise<CollectionRow> {
    const row = await findCollection(executor, actor.membership.organizationId, id);
    if (!row || !canSee(actor, id)) throw new NotFound();
    return row;
  }

  /** Refuses access lists naming members or groups of another organization (or none). */
  async function checkAccessTargets(
    executor: Executor,
    actor: { membership: Membership; useGroups: boolean },
    users: AccessInput[] | undefined,
    groups: AccessInput[] | undefined,
  ): Promise<void> {
    const organizationId = actor.membership.organizationId;
    if (users?.length) {
      const known = await membersOfOrganization(executor, organizationId, users.map((u) => u.id));
      const stranger = users.find((u) => !known.has(u.id));
      if (stranger) throw BadRequest.field('users', `Member ${stranger.id} does not belong to this organization.`);
    }
    if (groups?.length) {
      if (!actor.useGroups) throw BadRequest.field('groups', 'This organization cannot use groups.');
      const known = await groupsOfOrganization(executor, organizationId, groups.map((g) => g.id));
      const stranger = groups.find((g) => !known.has(g.id));
      if (stranger) throw BadRequest.field('groups', `Group ${stranger.id} does not belong to this organization.`);
    }
  }

  function checkName(name: string): void {
    if (!isEncString(name)) throw BadRequest.field('name', 'The name field is not a valid encrypted string.');
  }

  /** Without admin access to every collection, a collection nobody manages would be lost to everyone. */
  function checkSomeoneManages(actor: CollectionActor, access: { users: { manage: boolean | number }[]; groups: { manage: boolean | number }[] }): void {
    if (actor.settings.allowAdminAccessToAllCollectionItems) return;
    if (!access.users.some((u) => Boolean(u.manage)) && !access.groups.some((g) => Boolean(g.manage))) {
      throw new BadRequest('At least one member or group must have can manage permission.');
    }
  }

  async function accessDetailsFor(executor: Executor, membership: Membership, row: CollectionRow): Promise<CollectionAccessDetailsResponse> {
    const grants = await collectionGrants(executor, membership);
    return toCollectionAccessDetails(row, await accessOf(executor, [row.id]), grants.get(row.id));
  }

  async function record(executor: Executor, client: ClientContext, membership: Membership, type: EventType, ids: readonly string[]): Promise<void> {
    const now = clock.now().toISOString();
    await audit.record(
      executor,
      client,
      ids.map((collectionId) => ({ type, collectionId, organizationId: membership.organizationId, ...actingOf(membership) })),
    );
    await touchOrganizationMembers(executor, [membership.organizationId], now);
  }

  return {
    /**
     * The organization's collections for its admin views: every one for members who may read
     * them all, otherwise only those the caller manages (as the official server answers).
     */
    async listForOrganization({ membership }: MemberCaller, withAccess: boolean): Promise<CollectionAccessDetailsResponse[]> {
      const actor = await actorFor(db, membership);
      const all = withAccess ? canReadAllWithAccess(actor) : canReadAll(actor);
      const rows = await listCollections(db, membership.organizationId);
      const shown = all ? rows : rows.filter((r) => manages(actor, r.id));
      const access = await accessOf(db, shown.map((r) => r.id));
      return shown.map((row) => toCollectionAccessDetails(row, accessByCollection(access, row.id), actor.grants.get(row.id)));
    },

    async get({ membership }: MemberCaller, id: string) {
      const actor = await actorFor(db, membership);
      const row = await visibleCollection(db, actor, id);
      if (!canRead(actor, id)) throw new Forbidden('You do not have permission to view this collection.');
      return toCollectionResponse(row);
    },

    async getDetails({ membership }: MemberCaller, id: string): Promise<CollectionAccessDetailsResponse> {
      const actor = await actorFor(db, membership);
      const row = await visibleCollection(db, actor, id);
      if (!canReadWithAccess(actor, id)) throw new Forbidden('You do not have permission to view this collection.');
      return toCollectionAccessDetails(row, await accessOf(db, [id]), actor.grants.get(id));
    },

    async getUsers({ membership }: MemberCaller, id: string): Promise<AccessSelectionResponse[]> {
      const actor = await actorFor(db, membership);
      await visibleCollection(db, actor, id);
      if (!canRead(actor, id)) throw new Forbidden('You do not have permission to view this collection.');
      return (await accessOf(db, [id])).users.map(toAccessSelection);
    },

    async create({ membership, client }: MemberCaller, body: CreateCollectionBody): Promise<CollectionAccessDetailsResponse> {
      checkName(body.name);
      const users = normalizeAccess(body.users, 'users') ?? [];
      const groups = normalizeAccess(body.groups, 'groups') ?? [];
      return db.transaction().execute(async (tx) => {
        const actor = await actorFor(tx, membership);
        if (!canCreate(actor)) throw new Forbidden('You do not have permission to create collections.');
        if (actor.maxCollections !== null && (await countCollections(tx, membership.organizationId)) >= actor.maxCollections) {
          throw new BadRequest(`You have reached the maximum number of collections (${actor.maxCollections}) for this organization.`);
        }
        await checkAccessTargets(tx, actor, users, groups);
        // A creator who cannot edit every collection would otherwise lose the one just made.
        if (!canEditAny(actor) && !users.some((u) => u.id === membership.id)) {
          users.push({ id: membership.id, readOnly: false, hidePasswords: false, manage: true });
        }
        checkSomeoneManages(actor, { users, groups });
        const now = clock.now().toISOString();
        const row: CollectionRow = {
          id: randomUUID(),
          organization_id: membership.organizationId,
          name: body.name,
          external_id: body.externalId ?? null,
          type: 0,
          creation_date: now,
          revision_date: now,
          default_user_collection_email: null,
        };
        await insertCollection(tx, row);
        await replaceCollectionUsers(tx, row.id, users);
        await replaceCollectionGroups(tx, row.id, groups);
        await record(tx, client, membership, EventType.Collection_Created, [row.id]);
        return accessDetailsFor(tx, membership, row);
      });
    },

    async update({ membership, client }: MemberCaller, id: string, body: UpdateCollectionBody): Promise<CollectionAccessDetailsResponse> {
      checkName(body.name);
      const users = normalizeAccess(body.users, 'users');
      const groups = normalizeAccess(body.groups, 'groups');
      return db.transaction().execute(async (tx) => {
        const actor = await actorFor(tx, membership);
        const row = await visibleCollection(tx, actor, id);
        const current = await accessOf(tx, [id]);
        if (!canEdit(actor, id, unmanagedOf(current))) throw new Forbidden('You do not have permission to edit this collection.');
        await checkAccessTargets(tx, actor, users, groups);
        checkSomeoneManages(actor, { users: users ?? current.users, groups: groups ?? current.groups });
        const now = clock.now().toISOString();
        const externalId = body.externalId === undefined ? row.external_id : body.externalId;
        await updateCollection(tx, id, { name: body.name, external_id: externalId, revision_date: now });
        if (users) await replaceCollectionUsers(tx, id, users);
        if (groups) await replaceCollectionGroups(tx, id, groups);
        await record(tx, client, membership, EventType.Collection_Updated, [id]);
        return accessDetailsFor(tx, membership, { ...row, name: body.name, external_id: externalId, revision_date: now });
      });
    },

    async replaceUsers({ membership, client }: MemberCaller, id: string, list: readonly AccessSelection[]): Promise<void> {
      const users = normalizeAccess(list, 'users') ?? [];
      await db.transaction().execute(async (tx) => {
        const actor = await actorFor(tx, membership);
        await visibleCollection(tx, actor, id);
        const current = await accessOf(tx, [id]);
        const mayManageUsers = actor.settings.allowAdminAccessToAllCollectionItems && membership.rights.has('manageUsers');
        if (!mayManageUsers && !canEdit(actor, id, unmanagedOf(current))) throw new Forbidden('You do not have permission to edit this collection.');
        await checkAccessTargets(tx, actor, users, undefined);
        checkSomeoneManages(actor, { users, groups: current.groups });
        await replaceCollectionUsers(tx, id, users);
        await record(tx, client, membership, EventType.Collection_Updated, [id]);
      });
    },

    /**
     * Adds (or, for those already there, replaces) the given members' and groups' access on
     * several collections, all or nothing, for a caller who may edit every one of them; a
     * collection that is not the organization's or that the caller may not edit answers 404,
     * as the official server does. Records Collection_Updated (1301) for each.
     */
    async addAccess({ membership, client }: MemberCaller, body: BulkAccessBody): Promise<void> {
      const ids = [...new Set(body.collectionIds.map((id) => id.toLowerCase()))];
      const users = normalizeAccess(body.users, 'users') ?? [];
      const groups = normalizeAccess(body.groups, 'groups') ?? [];
      // Each collection rewrites its whole access list: bounded so one request stays small.
      if (ids.length * (users.length + groups.length) > BULK_ACCESS_ROWS) {
        throw BadRequest.field('collectionIds', `At most ${BULK_ACCESS_ROWS} grants (collections times members and groups) at once.`);
      }
      await db.transaction().execute(async (tx) => {
        const actor = await actorFor(tx, membership);
        const rows = await listCollections(tx, membership.organizationId, ids);
        if (rows.length !== ids.length) throw new NotFound('One or more collections not found.');
        const access = await accessOf(tx, ids);
        for (const id of ids) {
          if (!canSee(actor, id) || !canEdit(actor, id, unmanagedOf(accessByCollection(access, id)))) throw new NotFound();
        }
        await checkAccessTargets(tx, actor, users, groups);
        for (const id of ids) {
          const current = accessByCollection(access, id);
          const merged = {
            users: withAccess(current.users.map(accessInputOf), users),
            groups: withAccess(current.groups.map(accessInputOf), groups),
          };
          checkSomeoneManages(actor, merged);
          if (users.length > 0) await replaceCollectionUsers(tx, id, merged.users);
          if (groups.length > 0) await replaceCollectionGroups(tx, id, merged.groups);
        }
        await record(tx, client, membership, EventType.Collection_Updated, ids);
      });
    },

    async delete({ membership, client }: MemberCaller, ids: readonly string[]): Promise<void> {
      const unique = [...new Set(ids.map((id) => id.toLowerCase()))];
      await db.transaction().execute(async (tx) => {
        const actor = await actorFor(tx, membership);
        const rows = await listCollections(tx, membership.organizationId, unique);
        if (rows.length !== unique.length || unique.some((id) => !canSee(actor, id))) throw new NotFound();
        const access = await accessOf(tx, unique);
        for (const id of unique) {
          if (!canDelete(actor, id, unmanagedOf(accessByCollection(access, id)))) {
            throw new Forbidden('You do not have permission to delete this collection.');
          }
        }
        await record(tx, client, membership, EventType.Collection_Deleted, unique);
        await deleteCollections(tx, unique);
      });
    },

    forUser: ({ userId }: UserCaller) => collectionDetailsForUser(db, userId),
  };
}

export type CollectionService = ReturnType<typeof createCollectionService>;
