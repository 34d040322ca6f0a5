import type { Selectable } from 'kysely';
import type { CollectionsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';
import { directAndGroupGrants, FULL_ACCESS, fullAccessFrom, type CollectionGrant } from '../../platform/access/org-access.js';
import { OrganizationUserStatusType } from '../../platform/access/roles.js';

export type CollectionRow = Selectable<CollectionsTable>;

/** A member's or group's access to one collection. */
export interface AccessRow {
  collection_id: string;
  /** The organization user id or the group id. */
  id: string;
  read_only: boolean | number;
  hide_passwords: boolean | number;
  manage: boolean | number;
}

export interface AccessInput {
  id: string;
  readOnly: boolean;
  hidePasswords: boolean;
  manage: boolean;
}

export async function findCollection(db: Executor, organizationId: string, id: string): Promise<CollectionRow | undefined> {
  return db.selectFrom('collections').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export async function listCollections(db: Executor, organizationId: string, ids?: readonly string[]): Promise<CollectionRow[]> {
  if (ids && ids.length === 0) return [];
  let query = db.selectFrom('collections').selectAll().where('organization_id', '=', organizationId);
  if (ids) query = query.where('id', 'in', ids);
  return query.orderBy('creation_date').orderBy('id').execute();
}

export async function countCollections(db: Executor, organizationId: string): Promise<number> {
  const row = await db.selectFrom('collections').select((eb) => eb.fn.countAll<string | number>().as('n')).where('organization_id', '=', organizationId).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** The direct (user) and group access rows of some collections. */
export async function accessOf(db: Executor, collectionIds: readonly string[]): Promise<{ users: AccessRow[]; groups: AccessRow[] }> {
  if (collectionIds.length === 0) return { users: [], groups: [] };
  const users = await db
    .selectFrom('collection_users')
    .select(['collection_id', 'organization_user_id as id', 'read_only', 'hide_passwords', 'manage'])
    .where('collection_id', 'in', collectionIds)
    .orderBy('organization_user_id')
    .execute();
  const groups = await db
    .selectFrom('collection_groups')
    .select(['collection_id', 'group_id as id', 'read_only', 'hide_passwords', 'manage'])
    .where('collection_id', 'in', collectionIds)
    .orderBy('group_id')
    .execute();
  return { users, groups };
}

export async function insertCollection(db: Executor, row: CollectionRow): Promise<void> {
  await db.insertInto('collections').values(row).execute();
}

export async function updateCollection(db: Executor, id: string, values: { name: string; external_id: string | null; revision_date: string }): Promise<void> {
  await db.updateTable('collections').set(values).where('id', '=', id).execute();
}

export async function replaceCollectionUsers(db: Executor, collectionId: string, users: readonly AccessInput[]): Promise<void> {
  await db.deleteFrom('collection_users').where('collection_id', '=', collectionId).execute();
  if (users.length === 0) return;
  await db
    .insertInto('collection_users')
    .values(users.map((u) => ({ collection_id: collectionId, organization_user_id: u.id, read_only: u.readOnly, hide_passwords: u.hidePasswords, manage: u.manage })))
    .execute();
}

export async function replaceCollectionGroups(db: Executor, collectionId: string, groups: readonly AccessInput[]): Promise<void> {
  await db.deleteFrom('collection_groups').where('collection_id', '=', collectionId).execute();
  if (groups.length === 0) return;
  await db
    .insertInto('collection_groups')
    .values(groups.map((g) => ({ collection_id: collectionId, group_id: g.id, read_only: g.readOnly, hide_passwords: g.hidePasswords, manage: g.manage })))
    .execute();
}

/**
 * Deletes collections with their access rows (cascade) and their item assignments
 * (`collection_ciphers` predates the collections table, so it has no foreign key to cascade).
 * The collections go first: the assignments of a collection that is gone do not stamp their
 * items (migration 0021), as every member who reached it gets a new sync section anyway.
 */
export async function deleteCollections(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('collections').where('id', 'in', ids).execute();
  await db.deleteFrom('collection_ciphers').where('collection_id', 'in', ids).execute();
}

/** Ids among `ids` that are members (any status) of the organization. */
export async function membersOfOrganization(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('organization_users').select('id').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** Ids among `ids` that are groups of the organization. */
export async function groupsOfOrganization(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('groups').select('id').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}

/** Ids among `ids` that are collections of the organization. */
export async function collectionsOfOrganization(db: Executor, organizationId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.selectFrom('collections').select('id').where('organization_id', '=', organizationId).where('id', 'in', ids).execute();
  return new Set(rows.map((r) => r.id));
}


/**
 * Every collection a user reaches through confirmed memberships of enabled organizations, with
 * the highest access among direct and group grants. A constant number of queries.
 */
export async function collectionsForUser(db: Executor, userId: string): Promise<{ row: CollectionRow; grant: CollectionGrant }[]> {
  const memberships = await db
    .selectFrom('organization_users')
    .innerJoin('organizations', 'organizations.id', 'organization_users.organization_id')
    .select(['organization_users.id', 'organization_users.organization_id', 'organization_users.access_all', 'organization_users.type'])
    .where('organization_users.user_id', '=', userId)
    .where('organization_users.status', '=', OrganizationUserStatusType.Confirmed)
    .where('organizations.enabled', '=', true)
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


export async function findOrganization(db: Executor, organizationId: string) {
  return db
    .selectFrom('organizations')
    .select([
      'id',
      'max_collections',
      'use_groups',
      'limit_collection_creation',
      'limit_collection_deletion',
      'allow_admin_access_to_all_collection_items',
    ])
    .where('id', '=', organizationId)
    .executeTakeFirst();
}
