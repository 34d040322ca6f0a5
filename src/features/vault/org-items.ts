import type { Executor } from '../events/audit-log.js';
import type { CollectionGrant } from '../organizations/org-access.js';
import { viewOf, type CipherRow, type ItemAccess } from './ciphers.repository.js';

/** A collection a user reaches, with the highest access among their direct and group grants. */
export interface ReachedCollection {
  id: string;
  organizationId: string;
  grant: CollectionGrant;
}

/**
 * A user's rights on an organization item from the grants of the collections holding it
 * (highest wins, as in Bitwarden's CipherDetails view):
 * - edit: some reaching collection is not read-only;
 * - viewPassword: some reaching collection does not hide passwords;
 * - manage: some reaching collection is managed (Owners and Admins reach every collection
 *   of an organization with "access all" and manage them);
 * - delete and restore: manage when the organization limits item deletion to managers,
 *   otherwise edit or manage. Bitwarden also lets Owners and Admins delete any item when the
 *   organization allows admin access to all items; here they reach items through their
 *   collections like anyone else, which with "access all" comes to the same.
 */
export function accessOf(grants: readonly CollectionGrant[], collectionIds: string[], org: { useTotp: boolean; limitItemDeletion: boolean }): ItemAccess {
  const edit = grants.some((g) => !g.readOnly);
  const manage = grants.some((g) => g.manage);
  const remove = org.limitItemDeletion ? manage : edit || manage;
  return {
    collectionIds,
    edit: edit || manage,
    viewPassword: grants.some((g) => !g.hidePasswords),
    manage,
    delete: remove,
    restore: remove,
    organizationUseTotp: org.useTotp,
  };
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
): Promise<CipherRow[]> {
  if (collections.length === 0 || (ids && ids.length === 0)) return [];
  const byId = new Map(collections.map((c) => [c.id, c]));
  let query = viewOf(executor, userId)
    .innerJoin('collection_ciphers as cc', 'cc.cipher_id', 'c.id')
    .innerJoin('organizations as o', 'o.id', 'c.organization_id')
    .select(['cc.collection_id', 'o.use_totp', 'o.limit_item_deletion'])
    .where('cc.collection_id', 'in', [...byId.keys()]);
  if (ids) query = query.where('c.id', 'in', [...ids]);
  const rows = await query.execute();

  const items = new Map<string, { row: CipherRow; grants: CollectionGrant[]; collectionIds: string[]; useTotp: boolean; limit: boolean }>();
  for (const { collection_id, use_totp, limit_item_deletion, ...row } of rows) {
    const collection = byId.get(collection_id);
    if (!collection || collection.organizationId !== row.organization_id) continue;
    let item = items.get(row.id);
    if (!item) {
      item = { row, grants: [], collectionIds: [], useTotp: Boolean(use_totp), limit: Boolean(limit_item_deletion) };
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
