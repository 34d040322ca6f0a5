import type { Executor } from '../../db/database.js';
import { accessOf, type CollectionGrant, type ItemAccess, type OrganizationFlags } from '../../platform/access/grants.js';
import { viewOf, type CipherRow, type ItemVersion } from './ciphers.repository.js';

/** A collection a user reaches, with the highest access among their direct and group grants. */
export interface ReachedCollection {
  id: string;
  organizationId: string;
  grant: CollectionGrant;
  /**
   * The organization's flags as the caller read them (sync's section key): when given, the
   * rights are computed from these rather than from the organization row read with the items,
   * so that a section is built from exactly what its key says.
   */
  organization?: OrganizationFlags;
}

/**
 * The organization items a user reaches through `collections`, each with its access and the
 * ids of the reaching collections, in one query. With `ids`, only those items. An item is
 * reached only through collections of its own organization.
 */
export async function organizationItems(
  executor: Executor,
  userId: string,
  collections: readonly ReachedCollection[],
  ids?: readonly string[],
): Promise<(CipherRow & { version: number })[]> {
  if (collections.length === 0 || (ids && ids.length === 0)) return [];
  let query = viewOf(executor, userId)
    .innerJoin('collection_ciphers as cc', 'cc.cipher_id', 'c.id')
    .innerJoin('organizations as o', 'o.id', 'c.organization_id')
    .select(['c.version', 'cc.collection_id', 'o.use_totp', 'o.limit_item_deletion'])
    .where('cc.collection_id', 'in', collections.map((c) => c.id));
  if (ids) query = query.where('c.id', 'in', [...ids]);
  return withAccess(await query.execute(), collections);
}

/**
 * Like organizationItems for sync's listing: the ids, versions and the user's part of the
 * reached items, without their contents (see item-json-cache.ts). With `ids`, only those items.
 */
export async function organizationItemVersions(executor: Executor, userId: string, collections: readonly ReachedCollection[], ids?: readonly string[]): Promise<ItemVersion[]> {
  if (collections.length === 0 || (ids && ids.length === 0)) return [];
  let query = executor
    .selectFrom('collection_ciphers as cc')
    .innerJoin('ciphers as c', 'c.id', 'cc.cipher_id')
    .innerJoin('organizations as o', 'o.id', 'c.organization_id')
    .leftJoin('cipher_user_settings as s', (join) => join.onRef('s.cipher_id', '=', 'c.id').on('s.user_id', '=', userId))
    .select(['c.id', 'c.version', 'c.type', 'c.organization_id', 's.folder_id', 's.favorite', 's.archived_date', 'cc.collection_id', 'o.use_totp', 'o.limit_item_deletion'])
    .where('cc.collection_id', 'in', collections.map((c) => c.id));
  if (ids) query = query.where('c.id', 'in', [...ids]);
  return withAccess(await query.execute(), collections).map(({ organization_id: _, ...item }) => item);
}

interface ReachingRow {
  id: string;
  organization_id: string | null;
  collection_id: string;
  use_totp: number | boolean;
  limit_item_deletion: number | boolean;
}

/** One entry per item of `rows` (an item's row once per reaching collection), with the user's access. */
function withAccess<R extends ReachingRow>(
  rows: readonly R[],
  collections: readonly ReachedCollection[],
): (Omit<R, 'collection_id' | 'use_totp' | 'limit_item_deletion'> & { access: ItemAccess })[] {
  const byId = new Map(collections.map((c) => [c.id, c]));
  const items = new Map<string, { row: Omit<R, 'collection_id' | 'use_totp' | 'limit_item_deletion'>; grants: CollectionGrant[]; collectionIds: string[]; useTotp: boolean; limit: boolean }>();
  for (const { collection_id, use_totp, limit_item_deletion, ...row } of rows) {
    const collection = byId.get(collection_id);
    if (!collection || collection.organizationId !== row.organization_id) continue;
    let item = items.get(row.id);
    if (!item) {
      const flags = collection.organization ?? { useTotp: Boolean(use_totp), limitItemDeletion: Boolean(limit_item_deletion) };
      item = { row, grants: [], collectionIds: [], useTotp: flags.useTotp, limit: flags.limitItemDeletion };
      items.set(row.id, item);
    }
    item.grants.push(collection.grant);
    item.collectionIds.push(collection_id);
  }
  return [...items.values()].map(({ row, grants, collectionIds, useTotp, limit }) => ({
    ...row,
    access: accessOf(grants, collectionIds.sort(), { useTotp, limitItemDeletion: limit }),
  }));
}

/**
 * What changed for a member's sync in the organizations `organizationIds` since the marks of
 * their cached section (see changeMarks and migration 0021): the organization items stamped
 * above `shared` (edited, trashed, restored, assigned to or taken out of a collection, created,
 * shared in), the organization items whose settings (folder, favorite, archive) the user wrote
 * above `personal`, and whether an item of those organizations was deleted for good above
 * `shared` (it leaves no row; the caller lists what it reaches to find it). Index range scans
 * that find nothing when nothing changed.
 */
export async function organizationChangesSince(
  executor: Executor,
  userId: string,
  organizationIds: readonly string[],
  marks: { personal: number; shared: number },
): Promise<{ ids: string[]; removals: boolean }> {
  if (organizationIds.length === 0) return { ids: [], removals: false };
  const [items, settings, removals] = await Promise.all([
    executor.selectFrom('ciphers').select('id').where('organization_id', 'in', [...organizationIds]).where('change', '>', marks.shared).execute(),
    executor
      .selectFrom('cipher_user_settings as s')
      .innerJoin('ciphers as c', 'c.id', 's.cipher_id')
      .select('s.cipher_id as id')
      .where('s.user_id', '=', userId)
      .where('s.change', '>', marks.personal)
      .where('c.organization_id', 'is not', null)
      .execute(),
    executor.selectFrom('organization_item_removals').select('organization_id').where('organization_id', 'in', [...organizationIds]).where('change', '>', marks.shared).execute(),
  ]);
  return { ids: [...new Set([...items, ...settings].map((row) => row.id))], removals: removals.length > 0 };
}

/** The ids of the organization items a user reaches through `collections` (to find those deleted for good). */
export async function organizationItemIds(executor: Executor, collections: readonly ReachedCollection[]): Promise<Set<string>> {
  if (collections.length === 0) return new Set();
  const rows = await executor
    .selectFrom('collection_ciphers as cc')
    .innerJoin('ciphers as c', 'c.id', 'cc.cipher_id')
    .select(['c.id', 'c.organization_id', 'cc.collection_id'])
    .where('cc.collection_id', 'in', collections.map((c) => c.id))
    .execute();
  const organizationOf = new Map(collections.map((c) => [c.id, c.organizationId]));
  return new Set(rows.filter((row) => organizationOf.get(row.collection_id) === row.organization_id).map((row) => row.id));
}
