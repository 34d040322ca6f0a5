import { NotFound } from '../../http/errors.js';
import { groupBy } from '../../shared/group-by.js';
import type { Executor } from '../../db/database.js';
import { confirmedMembership, type Membership } from '../../platform/access/org-access.js';
import { reachesEveryCollection } from '../../platform/access/grants.js';
import { can, visibleCiphers } from './cipher-access.js';
import { viewOf, type CipherRow } from './ciphers.repository.js';

/*
 * Who may act on an organization's items through the admin console's item routes
 * (`/ciphers/.../admin`, `delete-admin`, `restore-admin`, `collections-admin`), as the official
 * CanEditCipherAsAdmin and CanDeleteOrRestoreCipherAsAdmin decide: only an "admin" of the
 * organization (a confirmed owner or admin, or a custom member who may edit any collection),
 * and then every item when they edit every item (editsEveryItem), an item in no collection, or
 * an item they may edit (or delete) through one of their own collections. Managers and members
 * use the ordinary item routes. Everyone else gets 404, as for an id that does not exist.
 */

/** The right an admin route asks for on each item: edit (content, collections) or delete (trash, restore, delete). */
export type AdminRight = 'edit' | 'delete';

/** The caller's membership when it makes them an admin of the organization (the official "admin" test), else null. */
export async function adminMembership(executor: Executor, organizationId: string, userId: string): Promise<Membership | null> {
  const membership = await confirmedMembership(executor, organizationId.toLowerCase(), userId);
  return membership?.rights.has('editAnyCollection') ? membership : null;
}

/** The official CanEditAllCiphers, for a member holding editAnyCollection: a custom member always; owners and admins while the organization lets admins at all items. */
export async function editsEveryItem(executor: Executor, membership: Membership): Promise<boolean> {
  const org = await executor
    .selectFrom('organizations')
    .select('allow_admin_access_to_all_collection_items')
    .where('id', '=', membership.organizationId)
    .executeTakeFirst();
  return reachesEveryCollection(membership, 'editAnyCollection', Boolean(org?.allow_admin_access_to_all_collection_items));
}

/**
 * The items `ids` for an admin route, all or none: every id must be an item of one organization
 * (`organizationId` when the call names it) that the caller may act on as its admin with
 * `right`; otherwise 404, and nothing is done. Answers them in the admin view's form.
 */
export async function adminCiphers(executor: Executor, userId: string, organizationId: string | null, ids: readonly string[], right: AdminRight): Promise<CipherRow[]> {
  const wanted = [...new Set(ids.map((id) => id.toLowerCase()))];
  const found = wanted.length === 0 ? [] : await executor.selectFrom('ciphers').select(['id', 'organization_id']).where('id', 'in', wanted).execute();
  const orgId = organizationId?.toLowerCase() ?? found[0]?.organization_id;
  if (!orgId || found.length !== wanted.length || found.some((r) => r.organization_id !== orgId)) throw new NotFound();
  const membership = await adminMembership(executor, orgId, userId);
  if (!membership) throw new NotFound();
  if (wanted.length === 0) return [];
  if (!(await editsEveryItem(executor, membership))) {
    // Restricted admins: items in no collection are theirs; the others need the right through their own collections.
    const placed = await executor.selectFrom('collection_ciphers').select('cipher_id').distinct().where('cipher_id', 'in', wanted).execute();
    const assigned = placed.map((p) => p.cipher_id);
    if (assigned.length > 0) {
      const seen = await visibleCiphers(executor, userId, assigned);
      if (seen.length !== assigned.length || !seen.every((row) => can(row, right))) throw new NotFound();
    }
  }
  const rows = await organizationDetails(executor, userId, orgId, wanted);
  if (rows.length !== wanted.length) throw new NotFound();
  return rows;
}

/**
 * An organization item for the admin console's item routes (the official "edit as admin" rule,
 * CanEditCipherAsAdmin, see adminCiphers), in the admin view's form; 404 for anyone else.
 */
export async function cipherAsAdmin(executor: Executor, userId: string, id: string): Promise<CipherRow> {
  return (await adminCiphers(executor, userId, null, [id], 'edit'))[0] as CipherRow;
}

/** Items of an organization with all their collections (admin views: no per-user rights). */
export async function organizationDetails(executor: Executor, userId: string, organizationId: string, ids?: string[]): Promise<CipherRow[]> {
  let query = viewOf(executor, userId).where('c.organization_id', '=', organizationId);
  if (ids) query = query.where('c.id', 'in', ids);
  const rows = await query.execute();
  if (rows.length === 0) return [];
  let places = executor
    .selectFrom('collection_ciphers as cc')
    .innerJoin('ciphers as c', 'c.id', 'cc.cipher_id')
    .select(['cc.cipher_id', 'cc.collection_id'])
    .where('c.organization_id', '=', organizationId);
  if (ids) places = places.where('cc.cipher_id', 'in', ids);
  const org = await executor.selectFrom('organizations').select('use_totp').where('id', '=', organizationId).executeTakeFirst();
  const byCipher = groupBy(await places.execute(), (p) => p.cipher_id, (p) => p.collection_id);
  return rows.map((row) => ({
    ...row,
    access: {
      collectionIds: (byCipher.get(row.id) ?? []).sort(),
      edit: true,
      viewPassword: true,
      manage: true,
      delete: true,
      restore: true,
      organizationUseTotp: Boolean(org?.use_totp),
    },
  }));
}
