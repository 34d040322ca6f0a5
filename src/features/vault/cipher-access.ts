import { BadRequest, NotFound } from '../../http/errors.js';
import { collectionsForUser } from '../../platform/access/grants.js';
import type { AuditEvent } from '../../platform/audit/audit-log.js';
import type { Executor } from '../../db/database.js';
import type { EventType } from '../../platform/audit/event-type.js';
import type { Right } from '../../platform/access/roles.js';
import { touchVault } from './revisions.js';
import { findPersonalCiphers, setRevisionDate, type CipherRow } from './ciphers.repository.js';
import { organizationItems, type ReachedCollection } from './org-items.js';
import { touchOrganizationMembers } from '../../platform/access/memberships.js';

/**
 * What a call does with an item:
 * - read: see it, file it in one's own folder, mark it favorite (any reaching collection);
 * - edit: change its content, archive or unarchive it (a reaching collection that is not
 *   read-only, or one the caller manages);
 * - assign: change its collections: edit, and its passwords not hidden from the caller (else
 *   putting it into a collection where they are shown would reveal them);
 * - delete: trash, restore or delete it for good (`permissions.delete` of org-items.ts:
 *   manage when the organization limits item deletion, edit otherwise).
 * A personal item's owner may do everything with it.
 */
export type CipherRight = 'read' | 'edit' | 'assign' | 'delete';

const REFUSED: Record<Exclude<CipherRight, 'read'>, string> = {
  edit: 'You do not have permissions to edit this.',
  assign: 'You do not have permission to change the collections of this item.',
  delete: 'You do not have permissions to delete this.',
};

export function can(row: CipherRow, right: CipherRight): boolean {
  if (!row.access) return true;
  switch (right) {
    case 'read':
      return true;
    case 'edit':
      return row.access.edit;
    case 'assign':
      return row.access.edit && row.access.viewPassword;
    case 'delete':
      return row.access.delete;
  }
}

/** Rights that open the admin view of any one item of the organization (`GET /ciphers/{id}/admin`). */
export const VIEWS_ANY_ITEM: readonly Right[] = ['viewAllItems', 'editAnyCollection', 'deleteAnyCollection'];
/** Rights that list every item of the organization (`GET /ciphers/organization-details`): its admins, exporters and report readers. */
export const LISTS_ALL_ITEMS: readonly Right[] = ['viewAllItems', 'editAnyCollection', 'accessImportExport', 'accessReports'];

/** Whether a member's rights let them read any item of their organization, through the admin console's item routes. */
export function readsEveryItem(rights: ReadonlySet<Right>): boolean {
  return VIEWS_ANY_ITEM.some((right) => rights.has(right)) || LISTS_ALL_ITEMS.some((right) => rights.has(right));
}

/** The collections a user reaches, in the shape org-items.ts takes. */
export async function reachedCollections(executor: Executor, userId: string): Promise<ReachedCollection[]> {
  const rows = await collectionsForUser(executor, userId);
  return rows.map(({ row, grant }) => ({ id: row.id, organizationId: row.organization_id, grant }));
}

/**
 * The items among `ids` a user may see: their own items and the organization items they reach
 * through collections of organizations they are a confirmed member of (organization items
 * carry the caller's `access`). An id the user may not see is treated exactly like an id
 * that does not exist.
 */
export async function visibleCiphers(executor: Executor, userId: string, ids: readonly string[]): Promise<CipherRow[]> {
  const wanted = [...new Set(ids)];
  const personal = await findPersonalCiphers(executor, userId, wanted);
  const found = new Set(personal.map((r) => r.id));
  const rest = wanted.filter((id) => !found.has(id));
  if (rest.length === 0) return personal;
  const collections = await reachedCollections(executor, userId);
  return [...personal, ...(await organizationItems(executor, userId, collections, rest))];
}

/** The items among `ids` the user may act on with `right`; bulk calls ignore the others. */
export async function accessibleCiphers(executor: Executor, userId: string, ids: readonly string[], right: CipherRight = 'read'): Promise<CipherRow[]> {
  return (await visibleCiphers(executor, userId, ids)).filter((row) => can(row, right));
}

/** One item the user may act on with `right`: 404 when they cannot see it, 400 when they may only look. */
export async function accessibleCipher(executor: Executor, userId: string, id: string, right: CipherRight = 'read'): Promise<CipherRow> {
  const [row] = await visibleCiphers(executor, userId, [id]);
  if (!row) throw new NotFound();
  if (right !== 'read' && !can(row, right)) throw new BadRequest(REFUSED[right]);
  return row;
}

/**
 * Moves the revision dates that make clients sync after a change of `rows`: the caller's,
 * and for organization items every member of the organization.
 */
export async function touchRevisions(executor: Executor, userId: string, rows: readonly Pick<CipherRow, 'organization_id'>[], date: string): Promise<void> {
  await touchVault(executor, userId, date);
  await touchOrganizationMembers(executor, [...new Set(rows.flatMap((r) => (r.organization_id ? [r.organization_id] : [])))], date);
}

/**
 * After a change to the caller's own settings of items (folder, favorite, archive): a personal
 * item's revision moves, an organization item's shared revision does not, so the other members'
 * copies stay current; only the caller's clients sync.
 */
export async function touchPersonalSettings(executor: Executor, userId: string, rows: readonly Pick<CipherRow, 'id' | 'organization_id'>[], date: string): Promise<void> {
  await setRevisionDate(
    executor,
    rows.filter((r) => !r.organization_id).map((r) => r.id),
    date,
  );
  await touchVault(executor, userId, date);
}

/** The revision an item shows after a change to the caller's own settings of it (see touchPersonalSettings). */
export function personalRevision(row: Pick<CipherRow, 'organization_id' | 'revision_date'>, now: string): string {
  return row.organization_id ? row.revision_date : now;
}

/** One audit event per item, acted on by the user. */
export function cipherEvents(type: EventType, userId: string, rows: readonly { id: string; organization_id?: string | null }[]): AuditEvent[] {
  return rows.map((r) => ({ type, userId, organizationId: r.organization_id ?? null, cipherId: r.id, actingUserId: userId }));
}
