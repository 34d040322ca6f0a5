import type { Selectable } from 'kysely';
import type { Executor } from '../../db/database.js';
import type { CollectionsTable } from '../../db/schema.js';
import type { Membership } from './org-access.js';
import { confirmedInEnabledOrganizations } from './memberships.js';
import { OrganizationUserType } from './roles.js';

/*
 * Who may do what to an organization's items, as one chain: a member's collection grants, direct
 * and through groups, the highest of them winning; what the membership itself adds (access to
 * all collections, the Manager role); and from those, the rights on an item and on a collection.
 * Features apply the chain; they do not re-derive it.
 */

export interface CollectionGrant {
  readOnly: boolean;
  hidePasswords: boolean;
  manage: boolean;
}

/** What access-all (and the Manager role on its collections) gives: edit, see and manage. */
export const FULL_ACCESS: CollectionGrant = Object.freeze({ readOnly: false, hidePasswords: false, manage: true });

/** Highest wins: writable if any grant is, passwords shown if any shows them, manage if any manages. */
export function highest(a: CollectionGrant | undefined, b: CollectionGrant): CollectionGrant {
  if (!a) return b;
  return { readOnly: a.readOnly && b.readOnly, hidePasswords: a.hidePasswords && b.hidePasswords, manage: a.manage || b.manage };
}

/**
 * What memberships reach through their own and their groups' collection grants: per collection,
 * the highest access among those grants; and which of the memberships are in a group with
 * access to all collections. The two readers below add what the membership itself gives.
 */
export async function directAndGroupGrants(
  db: Executor,
  memberIds: readonly string[],
): Promise<{ grants: Map<string, CollectionGrant>; inAllAccessGroup: Set<string> }> {
  const direct = db
    .selectFrom('collection_users')
    .select(['collection_id', 'read_only', 'hide_passwords', 'manage'])
    .where('organization_user_id', 'in', memberIds);
  const viaGroups = db
    .selectFrom('collection_groups')
    .innerJoin('group_users', 'group_users.group_id', 'collection_groups.group_id')
    .select(['collection_groups.collection_id', 'collection_groups.read_only', 'collection_groups.hide_passwords', 'collection_groups.manage'])
    .where('group_users.organization_user_id', 'in', memberIds);
  const grants = new Map<string, CollectionGrant>();
  for (const row of await direct.unionAll(viaGroups).execute()) {
    const grant = { readOnly: Boolean(row.read_only), hidePasswords: Boolean(row.hide_passwords), manage: Boolean(row.manage) };
    grants.set(row.collection_id, highest(grants.get(row.collection_id), grant));
  }
  const allAccess = await db
    .selectFrom('groups')
    .innerJoin('group_users', 'group_users.group_id', 'groups.id')
    .select('group_users.organization_user_id')
    .where('group_users.organization_user_id', 'in', memberIds)
    .where('groups.access_all', '=', true)
    .execute();
  return { grants, inAllAccessGroup: new Set(allAccess.map((r) => r.organization_user_id)) };
}

/** Access to all collections, from the membership or one of its groups, and the legacy Manager role, give full access. */
export function fullAccessFrom(membership: { id: string; accessAll: boolean; type: OrganizationUserType }, inAllAccessGroup: ReadonlySet<string>) {
  return {
    toAll: membership.accessAll || inAllAccessGroup.has(membership.id),
    // The legacy Manager role manages, and so edits and sees, every collection it is assigned.
    toAssigned: membership.type === OrganizationUserType.Manager,
  };
}

/** The collections one membership reaches, with its access to each (see directAndGroupGrants and fullAccessFrom). */
export async function collectionGrants(db: Executor, membership: Pick<Membership, 'id' | 'organizationId' | 'accessAll' | 'type'>): Promise<Map<string, CollectionGrant>> {
  const { grants, inAllAccessGroup } = await directAndGroupGrants(db, [membership.id]);
  const full = fullAccessFrom(membership, inAllAccessGroup);
  if (full.toAll) {
    const all = await db.selectFrom('collections').select('id').where('organization_id', '=', membership.organizationId).execute();
    return new Map(all.map(({ id }) => [id, FULL_ACCESS]));
  }
  if (full.toAssigned) for (const id of grants.keys()) grants.set(id, FULL_ACCESS);
  return grants;
}

/** One way a member reaches a collection: directly (`groupId` null) or through one of their groups. */
export interface CollectionReach {
  memberId: string;
  groupId: string | null;
  collectionId: string;
  grant: CollectionGrant;
}

/** What collectionReaches needs to know of each member (see fullAccessFrom). */
export type ReachingMember = Pick<Membership, 'id' | 'accessAll' | 'type'>;

/**
 * Every way the given members of an organization reach its collections, one reach per member,
 * group (or none: directly) and collection, where collectionGrants keeps only the highest per
 * collection. Grants count on the organization's own collections and groups only. Access to all
 * collections, from the membership or from a group, reaches every collection that way with full
 * access (and so stands for that way's grants); a Manager manages what it is assigned
 * (fullAccessFrom). Which members count (statuses) is the caller's choice, and so is reading
 * the organization's collections (`everyCollection`, their ids in the order access to all lists
 * them). `count`, and which members reach any collection, are known before `list` expands access
 * to all collections, so a caller can bound its work first.
 */
export async function collectionReaches(
  db: Executor,
  organizationId: string,
  members: readonly ReachingMember[],
  everyCollection: readonly string[],
): Promise<{ count: number; reached: ReadonlySet<string>; list(): CollectionReach[] }> {
  const byId = new Map(members.map((m) => [m.id, m]));
  // Filtered by organization rather than by a list of member ids, which may run to thousands.
  const direct = await db
    .selectFrom('collection_users as cu')
    .innerJoin('collections as c', 'c.id', 'cu.collection_id')
    .select(['cu.organization_user_id as memberId', 'cu.collection_id as collectionId', 'cu.read_only', 'cu.hide_passwords', 'cu.manage'])
    .where('c.organization_id', '=', organizationId)
    .execute();
  const viaGroups = await db
    .selectFrom('group_users as gu')
    .innerJoin('groups as g', 'g.id', 'gu.group_id')
    .innerJoin('collection_groups as cg', 'cg.group_id', 'g.id')
    .innerJoin('collections as c', 'c.id', 'cg.collection_id')
    .select(['gu.organization_user_id as memberId', 'g.id as groupId', 'cg.collection_id as collectionId', 'cg.read_only', 'cg.hide_passwords', 'cg.manage'])
    .where('g.organization_id', '=', organizationId)
    .where('c.organization_id', '=', organizationId)
    .execute();
  const allAccessGroups = await db
    .selectFrom('group_users as gu')
    .innerJoin('groups as g', 'g.id', 'gu.group_id')
    .select(['gu.organization_user_id as memberId', 'g.id as groupId'])
    .where('g.organization_id', '=', organizationId)
    .where('g.access_all', '=', true)
    .execute();

  const wayOf = (memberId: string, groupId: string | null) => `${memberId}/${groupId ?? ''}`;
  const toAll: { memberId: string; groupId: string | null }[] = [
    ...members.filter((m) => m.accessAll).map((m) => ({ memberId: m.id, groupId: null })),
    ...allAccessGroups.filter((r) => byId.has(r.memberId)),
  ];
  const coveredWays = new Set(toAll.map((w) => wayOf(w.memberId, w.groupId)));
  const inAllAccessGroup = new Set(allAccessGroups.map((r) => r.memberId));
  const assigned: CollectionReach[] = [];
  for (const row of [...direct.map((r) => ({ ...r, groupId: null })), ...viaGroups]) {
    const member = byId.get(row.memberId);
    if (!member || coveredWays.has(wayOf(row.memberId, row.groupId))) continue;
    const grant = fullAccessFrom(member, inAllAccessGroup).toAssigned
      ? FULL_ACCESS
      : { readOnly: Boolean(row.read_only), hidePasswords: Boolean(row.hide_passwords), manage: Boolean(row.manage) };
    assigned.push({ memberId: row.memberId, groupId: row.groupId, collectionId: row.collectionId, grant });
  }
  const reached = new Set([...assigned.map((r) => r.memberId), ...(everyCollection.length === 0 ? [] : toAll.map((w) => w.memberId))]);
  return {
    count: assigned.length + toAll.length * everyCollection.length,
    reached,
    list: () => [...assigned, ...toAll.flatMap((w) => everyCollection.map((collectionId) => ({ ...w, collectionId, grant: FULL_ACCESS })))],
  };
}

/**
 * Every collection a user reaches through confirmed memberships of enabled organizations, with
 * the highest access among direct and group grants. A constant number of queries.
 */
export async function collectionsForUser(db: Executor, userId: string): Promise<{ row: Selectable<CollectionsTable>; grant: CollectionGrant }[]> {
  const memberships = await confirmedInEnabledOrganizations(db)
    .select(['ou.id', 'ou.organization_id', 'ou.access_all', 'ou.type'])
    .where('ou.user_id', '=', userId)
    .execute();
  if (memberships.length === 0) return [];
  const { grants, inAllAccessGroup } = await directAndGroupGrants(db, memberships.map((m) => m.id));
  const allOrgs = new Set<string>();
  const managerOrgs = new Set<string>();
  for (const m of memberships) {
    const full = fullAccessFrom({ id: m.id, accessAll: Boolean(m.access_all), type: m.type }, inAllAccessGroup);
    if (full.toAll) allOrgs.add(m.organization_id);
    else if (full.toAssigned) managerOrgs.add(m.organization_id);
  }
  const ids = [...grants.keys()];
  if (ids.length === 0 && allOrgs.size === 0) return [];
  const collections = await db
    .selectFrom('collections')
    .selectAll()
    .where((eb) => {
      const terms = [];
      if (ids.length > 0) terms.push(eb('id', 'in', ids));
      if (allOrgs.size > 0) terms.push(eb('organization_id', 'in', [...allOrgs]));
      return eb.or(terms);
    })
    .orderBy('organization_id')
    .orderBy('creation_date')
    .orderBy('id')
    .execute();
  return collections.map((row) => {
    const grant =
      allOrgs.has(row.organization_id) || managerOrgs.has(row.organization_id) ? FULL_ACCESS : (grants.get(row.id) ?? { readOnly: true, hidePasswords: true, manage: false });
    return { row, grant };
  });
}

/**
 * The users who see items in any of `collectionIds` of an organization, in one query: its
 * confirmed members (of an enabled organization) with access to all collections, from the
 * membership or one of its groups, or with a direct or group grant on one of them, as
 * collectionsForUser reaches them. Organization item pushes go to these users.
 */
export async function usersReachingCollections(db: Executor, organizationId: string, collectionIds: readonly string[]): Promise<string[]> {
  const ids = [...new Set(collectionIds)];
  const rows = await confirmedInEnabledOrganizations(db)
    .select('ou.user_id')
    .distinct()
    .where('ou.organization_id', '=', organizationId)
    .where('ou.user_id', 'is not', null)
    .where((eb) => {
      const terms = [
        eb('ou.access_all', '=', true),
        eb.exists(
          eb
            .selectFrom('group_users as gu')
            .innerJoin('groups as g', 'g.id', 'gu.group_id')
            .select('gu.group_id')
            .whereRef('gu.organization_user_id', '=', 'ou.id')
            .where('g.access_all', '=', true),
        ),
      ];
      if (ids.length > 0) {
        terms.push(
          eb.exists(eb.selectFrom('collection_users as cu').select('cu.collection_id').whereRef('cu.organization_user_id', '=', 'ou.id').where('cu.collection_id', 'in', ids)),
          eb.exists(
            eb
              .selectFrom('group_users as gu2')
              .innerJoin('collection_groups as cg', 'cg.group_id', 'gu2.group_id')
              .select('cg.collection_id')
              .whereRef('gu2.organization_user_id', '=', 'ou.id')
              .where('cg.collection_id', 'in', ids),
          ),
        );
      }
      return eb.or(terms);
    })
    .orderBy('ou.user_id')
    .execute();
  return rows.flatMap((r) => (r.user_id ? [r.user_id] : []));
}

/**
 * A user's rights on an organization item, from the collections through which they reach it
 * (highest access wins, see accessOf). Personal items have none: their owner may do all.
 */
export interface ItemAccess {
  collectionIds: string[];
  edit: boolean;
  viewPassword: boolean;
  manage: boolean;
  delete: boolean;
  restore: boolean;
  organizationUseTotp: boolean;
}

/** The organization's settings that enter a member's rights on its items (accessOf). */
export interface OrganizationFlags {
  useTotp: boolean;
  limitItemDeletion: boolean;
}

/** Whether one collection grant lets its holder edit the collection's items: not read-only, or manage. */
export function grantsEdit(grant: CollectionGrant): boolean {
  return !grant.readOnly || grant.manage;
}

/**
 * A user's rights on an organization item from the grants of the collections holding it
 * (highest wins, as in Bitwarden's CipherDetails view):
 * - edit: some reaching collection is not read-only, or is managed (grantsEdit);
 * - viewPassword: some reaching collection does not hide passwords;
 * - manage: some reaching collection is managed (Owners and Admins reach every collection
 *   of an organization with "access all" and manage them);
 * - delete and restore: manage when the organization limits item deletion to managers,
 *   otherwise edit or manage. Bitwarden also lets Owners and Admins delete any item when the
 *   organization allows admin access to all items; here they reach items through their
 *   collections like anyone else, which with "access all" comes to the same.
 */
export function accessOf(grants: readonly CollectionGrant[], collectionIds: string[], org: OrganizationFlags): ItemAccess {
  const edit = grants.some(grantsEdit);
  const manage = grants.some((g) => g.manage);
  const remove = org.limitItemDeletion ? manage : edit;
  return {
    collectionIds,
    edit,
    viewPassword: grants.some((g) => !g.hidePasswords),
    manage,
    delete: remove,
    restore: remove,
    organizationUseTotp: org.useTotp,
  };
}

/** The organization settings that decide who manages collections. */
export interface CollectionSettings {
  limitCollectionCreation: boolean;
  limitCollectionDeletion: boolean;
  allowAdminAccessToAllCollectionItems: boolean;
}

/** Who is acting on collections: their membership, the organization's settings and their grants. */
export interface CollectionActor {
  membership: Membership;
  settings: CollectionSettings;
  grants: ReadonlyMap<string, CollectionGrant>;
}

const isOwnerOrAdmin = (m: Membership) => m.type === OrganizationUserType.Owner || m.type === OrganizationUserType.Admin;

/**
 * A right that reaches every collection. Owners and admins hold it only while the organization
 * lets admins at all collection items; a custom member's flag holds regardless.
 */
function anyCollection(actor: CollectionActor, right: 'editAnyCollection' | 'deleteAnyCollection'): boolean {
  return reachesEveryCollection(actor.membership, right, actor.settings.allowAdminAccessToAllCollectionItems);
}

/** `anyCollection` for a caller that has only the membership and the organization's setting (item routes). */
export function reachesEveryCollection(m: Membership, right: 'editAnyCollection' | 'deleteAnyCollection', adminsReachAllItems: boolean): boolean {
  if (!m.rights.has(right)) return false;
  return !isOwnerOrAdmin(m) || adminsReachAllItems;
}

/** Owners, admins and custom members who may edit any collection also take over collections nobody manages. */
function mayAdoptUnmanaged(actor: CollectionActor): boolean {
  return isOwnerOrAdmin(actor.membership) || actor.membership.rights.has('editAnyCollection');
}

/** Sees every collection of the organization (the official ReadAll). */
export function canReadAll(actor: CollectionActor): boolean {
  const r = actor.membership.rights;
  return r.has('editAnyCollection') || r.has('deleteAnyCollection') || r.has('accessImportExport') || r.has('manageGroups');
}

/** Sees every collection with its member and group access (the official ReadAllWithAccess). */
export function canReadAllWithAccess(actor: CollectionActor): boolean {
  const r = actor.membership.rights;
  return r.has('editAnyCollection') || r.has('deleteAnyCollection') || r.has('manageUsers') || r.has('manageGroups');
}

/**
 * Assigned with manage (the legacy Manager role's assignments carry it, see collectionGrants).
 * The custom flags editAssignedCollections and deleteAssignedCollections give nothing beyond the
 * grant: the official server turned them into manage on the assignments and dropped them, and
 * honouring them would let a read-only assignee rewrite its own access.
 */
export function manages(actor: CollectionActor, collectionId: string): boolean {
  return actor.grants.get(collectionId)?.manage === true;
}

/**
 * Whether the collection exists for this caller at all: anything else answers 404. Member
 * managers list every collection with its access, so each one exists for them too.
 */
export function canSee(actor: CollectionActor, collectionId: string): boolean {
  return canReadAll(actor) || canReadAllWithAccess(actor) || actor.grants.has(collectionId);
}

export function canRead(actor: CollectionActor, collectionId: string): boolean {
  const r = actor.membership.rights;
  return r.has('editAnyCollection') || r.has('deleteAnyCollection') || manages(actor, collectionId);
}

export function canReadWithAccess(actor: CollectionActor, collectionId: string): boolean {
  return canRead(actor, collectionId) || actor.membership.rights.has('manageUsers') || actor.membership.rights.has('manageGroups');
}

export function canCreate(actor: CollectionActor): boolean {
  return actor.membership.rights.has('createNewCollections') || !actor.settings.limitCollectionCreation;
}

/** Whether the caller may edit every collection without being assigned. */
export function canEditAny(actor: CollectionActor): boolean {
  return anyCollection(actor, 'editAnyCollection');
}

export function canEdit(actor: CollectionActor, collectionId: string, unmanaged: boolean): boolean {
  return canEditAny(actor) || manages(actor, collectionId) || (unmanaged && mayAdoptUnmanaged(actor));
}

export function canDelete(actor: CollectionActor, collectionId: string, unmanaged: boolean): boolean {
  if (anyCollection(actor, 'deleteAnyCollection')) return true;
  const m = actor.membership;
  // With deletion limited, only owners and admins delete even the collections they manage.
  if (actor.settings.limitCollectionDeletion && !isOwnerOrAdmin(m)) return false;
  return manages(actor, collectionId) || (unmanaged && mayAdoptUnmanaged(actor));
}
