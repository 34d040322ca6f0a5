import type { Selectable } from 'kysely';
import type { CollectionsTable } from '../../db/schema.js';
import type { Executor } from '../../db/database.js';

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
