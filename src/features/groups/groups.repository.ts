import type { Selectable } from 'kysely';
import type { GroupsTable } from '../../db/schema.js';
import type { AccessInput, AccessRow } from '../collections/collections.repository.js';
import type { Executor } from '../../db/database.js';

export type GroupRow = Selectable<GroupsTable>;

export async function findGroup(db: Executor, organizationId: string, id: string): Promise<GroupRow | undefined> {
  return db.selectFrom('groups').selectAll().where('organization_id', '=', organizationId).where('id', '=', id).executeTakeFirst();
}

export async function listGroups(db: Executor, organizationId: string, ids?: readonly string[]): Promise<GroupRow[]> {
  if (ids && ids.length === 0) return [];
  let query = db.selectFrom('groups').selectAll().where('organization_id', '=', organizationId);
  if (ids) query = query.where('id', 'in', ids);
  return query.orderBy('name').orderBy('id').execute();
}

/** Collection access rows of some groups; `id` is the collection id here. */
export async function collectionsOfGroups(db: Executor, groupIds: readonly string[]): Promise<(AccessRow & { group_id: string })[]> {
  if (groupIds.length === 0) return [];
  return db
    .selectFrom('collection_groups')
    .select(['group_id', 'collection_id', 'collection_id as id', 'read_only', 'hide_passwords', 'manage'])
    .where('group_id', 'in', groupIds)
    .orderBy('collection_id')
    .execute();
}

export async function memberIdsOfGroup(db: Executor, groupId: string): Promise<string[]> {
  const rows = await db.selectFrom('group_users').select('organization_user_id').where('group_id', '=', groupId).orderBy('organization_user_id').execute();
  return rows.map((r) => r.organization_user_id);
}

export async function insertGroup(db: Executor, row: GroupRow): Promise<void> {
  await db.insertInto('groups').values(row).execute();
}

export async function updateGroup(db: Executor, id: string, values: Pick<GroupRow, 'name' | 'access_all' | 'external_id' | 'revision_date'>): Promise<void> {
  await db.updateTable('groups').set(values).where('id', '=', id).execute();
}

export async function replaceGroupCollections(db: Executor, groupId: string, collections: readonly AccessInput[]): Promise<void> {
  await db.deleteFrom('collection_groups').where('group_id', '=', groupId).execute();
  if (collections.length === 0) return;
  await db
    .insertInto('collection_groups')
    .values(collections.map((c) => ({ collection_id: c.id, group_id: groupId, read_only: c.readOnly, hide_passwords: c.hidePasswords, manage: c.manage })))
    .execute();
}

export async function addGroupMembers(db: Executor, groupId: string, memberIds: readonly string[]): Promise<void> {
  if (memberIds.length === 0) return;
  await db.insertInto('group_users').values(memberIds.map((id) => ({ group_id: groupId, organization_user_id: id }))).execute();
}

export async function removeGroupMembers(db: Executor, groupId: string, memberIds: readonly string[]): Promise<void> {
  if (memberIds.length === 0) return;
  await db.deleteFrom('group_users').where('group_id', '=', groupId).where('organization_user_id', 'in', memberIds).execute();
}

/** Deletes groups; their member and collection rows go with them (cascade), the members stay. */
export async function deleteGroups(db: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await db.deleteFrom('groups').where('id', 'in', ids).execute();
}
