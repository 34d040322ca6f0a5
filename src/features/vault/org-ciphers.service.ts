import { BadRequest, Forbidden, NotFound } from '../../http/errors.js';
import type { ClientContext, UserCaller } from '../../http/request-context.js';
import type { Executor } from '../../db/database.js';
import { EventType } from '../../platform/audit/event-type.js';
import { confirmedMembership, type Membership } from '../../platform/access/org-access.js';
import { grantsEdit } from '../../platform/access/grants.js';
import { accessibleCipher, can, cipherEvents, LISTS_ALL_ITEMS, reachedCollections, touchRevisions, VIEWS_ANY_ITEM, visibleCiphers } from './cipher-access.js';
import { BULK_LIMIT } from './cipher-lifecycle.js';
import { serializeCipherData, toCipherData } from './cipher-data.js';
import { assertCurrent, assertOwnFolder, type VaultDeps } from './ciphers.service.js';
import { cipherJson, cipherMiniDetailsJson, cipherMiniJson, type CipherRequest } from './ciphers.schemas.js';
import { applyShareUploads, attachmentBytes, withNewKeys } from './attachment-data.js';
import { fileKey } from '../../platform/storage/store-layout.js';
import { lockCipher } from './attachments.repository.js';
import { releaseStorage, reserveStorage } from '../../platform/storage/quota.js';
import { insertCiphers, newCipherRow, rowChange, setRevisionDate, upsertUserSettings, type CipherRow } from './ciphers.repository.js';
import { organizationItems, type ReachedCollection } from './org-items.js';
import { adminMembership, cipherAsAdmin, editsEveryItem, organizationDetails } from './admin-ciphers.js';

/** The admin console's item rule (admin-ciphers.ts), as the attachment routes read it. */
import { cipherPushes, collectionIdsOf, sendBuilt } from '../../platform/push/push-messages.js';
import { PushType } from '../../platform/push/pushes.js';


/** A grant that lets its holder put items in the collection or take them out. */
const writable = (c: ReachedCollection) => grantsEdit(c.grant);

function normalizeIds(ids: readonly string[] | null | undefined, field: string, required: boolean): string[] {
  if (!ids || ids.length === 0) {
    if (required) throw BadRequest.field(field, 'You must select at least one collection.');
    return [];
  }
  if (ids.length > BULK_LIMIT) throw BadRequest.field(field, `You can only select up to ${BULK_LIMIT} at a time.`);
  return [...new Set(ids.map((id) => id.toLowerCase()))];
}

async function memberOf(tx: Executor, organizationId: string | null | undefined, userId: string, field: string): Promise<Membership> {
  if (!organizationId) throw BadRequest.field(field, 'The organization is required.');
  const membership = await confirmedMembership(tx, organizationId.toLowerCase(), userId);
  if (!membership) throw BadRequest.field(field, 'You are not a member of this organization.');
  return membership;
}

/** Checks that `ids` are collections of the organization; returns the caller's collections there. */
async function collectionsIn(tx: Executor, userId: string, organizationId: string, ids: readonly string[], field: string) {
  if (ids.length > 0) {
    const rows = await tx.selectFrom('collections').select('id').where('organization_id', '=', organizationId).where('id', 'in', [...ids]).execute();
    if (rows.length !== ids.length) throw BadRequest.field(field, 'Some of the collections are not collections of this organization.');
  }
  const reached = (await reachedCollections(tx, userId)).filter((c) => c.organizationId === organizationId);
  return new Map(reached.map((c) => [c.id, c]));
}

function assertWritable(reached: Map<string, ReachedCollection>, ids: readonly string[], field: string) {
  for (const id of ids) {
    const c = reached.get(id);
    if (!c || !writable(c)) throw BadRequest.field(field, 'You do not have permission to add items to one of the collections.');
  }
}

/**
 * Organization items: creation in collections, sharing, collection changes and admin views.
 * Items are answered as JSON text (cipherJson and its forms), which the routes send as it is.
 */
export function createOrgCipherService({ db, audit, clock, pushes, files, apiBase }: VaultDeps) {
  const details = (row: CipherRow) => cipherJson(row, 'cipherDetails', apiBase);
  const miniDetails = (row: CipherRow) => cipherMiniDetailsJson(row, apiBase);

  /** The caller's confirmed membership of an organization named by the query; 404 when there is none. */
  async function memberIn(organizationId: string, userId: string): Promise<Membership> {
    const membership = await confirmedMembership(db, organizationId.toLowerCase(), userId);
    if (!membership) throw new NotFound();
    return membership;
  }

  /** The item as the caller now sees it (with access), or undefined when they no longer can. */
  async function seenAs(tx: Executor, userId: string, id: string): Promise<CipherRow | undefined> {
    return (await visibleCiphers(tx, userId, [id]))[0];
  }

  /** Writes a new organization item in `collectionIds`, with the caller's folder and favorite when given, and records Cipher_Created. */
  async function insertItem(tx: Executor, userId: string, client: ClientContext, organizationId: string, request: CipherRequest, data: string, collectionIds: readonly string[]) {
    const folderId = request.folderId?.toLowerCase() ?? null;
    const now = clock.now().toISOString();
    const row = newCipherRow({ user_id: null, organization_id: organizationId }, request, data, now);
    const { id } = row;
    await insertCiphers(tx, [row]);
    if (collectionIds.length > 0) await tx.insertInto('collection_ciphers').values(collectionIds.map((c) => ({ collection_id: c, cipher_id: id }))).execute();
    if (folderId || request.favorite) {
      await upsertUserSettings(tx, [{ user_id: userId, cipher_id: id, folder_id: folderId, favorite: request.favorite ?? false, archived_date: null }], []);
    }
    await audit.record(tx, client, cipherEvents(EventType.Cipher_Created, userId, [{ id, organization_id: organizationId }]));
    await touchRevisions(tx, userId, [{ organization_id: organizationId }], now);
    return id;
  }

  /** Moves personal items of the caller into an organization's collections in one transaction. */
  async function shareItems(
    userId: string,
    client: ClientContext,
    items: readonly { id: string; request: CipherRequest }[],
    organizationId: string | null | undefined,
    ids: readonly string[] | null | undefined,
  ): Promise<CipherRow[]> {
    const collectionIds = normalizeIds(ids, 'collectionIds', true);
    const stale: string[] = [];
    const shared = await db.transaction().execute(async (tx) => {
      const existing: CipherRow[] = [];
      for (const { id } of items) {
        // The attachments document and its storage move with the item: an upload must wait.
        await lockCipher(tx, id.toLowerCase());
        const row = await accessibleCipher(tx, userId, id.toLowerCase(), 'edit');
        if (row.organization_id) throw new BadRequest('One or more ciphers do not belong to you.');
        existing.push(row);
      }
      const membership = await memberOf(tx, organizationId, userId, 'cipher.organizationId');
      const reached = await collectionsIn(tx, userId, membership.organizationId, collectionIds, 'collectionIds');
      assertWritable(reached, collectionIds, 'collectionIds');
      const now = clock.now().toISOString();
      for (const [i, row] of existing.entries()) {
        const request = items[i]!.request;
        assertCurrent(row, request.lastKnownRevisionDate);
        // The attachments move with the item: their bytes now count against the organization's
        // storage. Copies re-encrypted for this organization (older clients) take their place.
        const { attachments, released } = applyShareUploads(withNewKeys(row.attachments, request.attachments2), membership.organizationId);
        const before = attachmentBytes(row.attachments);
        const after = attachmentBytes(attachments);
        if (before > 0) await releaseStorage(tx, row, before);
        if (after > 0) await reserveStorage(tx, { user_id: null, organization_id: membership.organizationId }, after, 0);
        stale.push(...released.map((name) => fileKey(row.id, name)));
        const data = serializeCipherData(toCipherData(request));
        await tx
          .updateTable('ciphers')
          .set({ user_id: null, organization_id: membership.organizationId, type: request.type, data, key: request.key ?? null, reprompt: request.reprompt ?? 0, attachments, revision_date: now, ...rowChange })
          .where('id', '=', row.id)
          .execute();
        await tx.insertInto('collection_ciphers').values(collectionIds.map((c) => ({ collection_id: c, cipher_id: row.id }))).execute();
      }
      const rows = existing;
      await audit.record(tx, client, cipherEvents(EventType.Cipher_Shared, userId, rows.map((row) => ({ id: row.id, organization_id: membership.organizationId }))));
      await touchRevisions(tx, userId, [{ organization_id: membership.organizationId }], now);
      const seen: CipherRow[] = [];
      for (const row of rows) {
        const after = await seenAs(tx, userId, row.id);
        if (!after) throw new NotFound();
        seen.push(after);
      }
      return seen;
    });
    // After commit: the files the share copies replaced (the sweeper removes any a crash leaves).
    for (const key of stale) await files.delete(key).catch(() => undefined);
    for (const row of shared) await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherUpdate, row, client.deviceIdentifier, collectionIds));
    return shared;
  }

  /** Sets an item's collections: the caller changes those they may write to and keeps the others. */
  async function writeCollections(tx: Executor, cipherId: string, reached: Map<string, ReachedCollection>, requested: readonly string[]) {
    const current = await collectionIdsOf(tx, cipherId);
    const mine = (id: string) => {
      const c = reached.get(id);
      return c !== undefined && writable(c);
    };
    const next = new Set([...current.filter((id) => !mine(id)), ...requested.filter(mine)]);
    const removed = current.filter((id) => !next.has(id));
    const added = [...next].filter((id) => !current.includes(id));
    if (removed.length > 0) await tx.deleteFrom('collection_ciphers').where('cipher_id', '=', cipherId).where('collection_id', 'in', removed).execute();
    if (added.length > 0) await tx.insertInto('collection_ciphers').values(added.map((id) => ({ collection_id: id, cipher_id: cipherId }))).execute();
  }

  /** Sets an organization item's collections (`updateCollections` below); the item as the caller now sees it, if they still do. */
  async function setCollections({ userId, client }: UserCaller, id: string, ids: string[]): Promise<CipherRow | undefined> {
    const collectionIds = normalizeIds(ids, 'collectionIds', false);
    const { existing, now, seen } = await db.transaction().execute(async (tx) => {
      const existing = await accessibleCipher(tx, userId, id.toLowerCase(), 'assign');
      if (!existing.organization_id) throw new BadRequest('Cipher must belong to an organization.');
      const reached = await collectionsIn(tx, userId, existing.organization_id, collectionIds, 'collectionIds');
      await writeCollections(tx, existing.id, reached, collectionIds);
      const now = clock.now().toISOString();
      await setRevisionDate(tx, [existing.id], now);
      await audit.record(tx, client, cipherEvents(EventType.Cipher_UpdatedCollections, userId, [existing]));
      await touchRevisions(tx, userId, [existing], now);
      return { existing, now, seen: await seenAs(tx, userId, existing.id) };
    });
    // To everyone who sees the item now, in its collections as they now are (the official
    // server names the requested ones); members it left learn of it at their next sync.
    await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherUpdate, { ...existing, revision_date: now }, client.deviceIdentifier));
    return seen;
  }

  return {
    /** `POST /ciphers/create`: a new organization item in collections the caller may write to. */
    async create({ userId, client }: UserCaller, body: { cipher: CipherRequest; collectionIds: string[] }): Promise<string> {
      const request = body.cipher;
      const data = serializeCipherData(toCipherData(request));
      const collectionIds = normalizeIds(body.collectionIds, 'collectionIds', true);
      const folderId = request.folderId?.toLowerCase() ?? null;
      const created = await db.transaction().execute(async (tx) => {
        const membership = await memberOf(tx, request.organizationId, userId, 'cipher.organizationId');
        const reached = await collectionsIn(tx, userId, membership.organizationId, collectionIds, 'collectionIds');
        assertWritable(reached, collectionIds, 'collectionIds');
        await assertOwnFolder(tx, userId, folderId, 'cipher.folderId');
        const id = await insertItem(tx, userId, client, membership.organizationId, request, data, collectionIds);
        const row = await seenAs(tx, userId, id);
        if (!row) throw new NotFound();
        return row;
      });
      await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherCreate, created, client.deviceIdentifier, collectionIds));
      return cipherJson(created, 'cipher', apiBase);
    },

    /** `PUT /ciphers/{id}/share`: a personal item, re-encrypted with the organization key, moves into the organization. */
    async share({ userId, client }: UserCaller, id: string, body: { cipher: CipherRequest; collectionIds: string[] }): Promise<string> {
      const [shared] = await shareItems(userId, client, [{ id, request: body.cipher }], body.cipher.organizationId, body.collectionIds);
      return cipherJson(shared!, 'cipher', apiBase);
    },

    /**
     * `PUT /ciphers/share`: moves several of the caller's personal items into one organization
     * and the same collections, all or nothing (the organization is the first item's, as the
     * official server reads it). Answers the items in their mini form.
     */
    async shareMany({ userId, client }: UserCaller, body: { ciphers: (CipherRequest & { id: string })[]; collectionIds: string[] }): Promise<string[]> {
      if (body.ciphers.length === 0) throw BadRequest.field('ciphers', 'No items to move.');
      if (body.ciphers.length > BULK_LIMIT) throw BadRequest.field('ciphers', `You can only move up to ${BULK_LIMIT} items at a time.`);
      if (new Set(body.ciphers.map((c) => c.id.toLowerCase())).size !== body.ciphers.length) throw BadRequest.field('ciphers', 'An item is listed more than once.');
      const organizationId = body.ciphers[0]!.organizationId;
      if (body.ciphers.some((c) => c.organizationId?.toLowerCase() !== organizationId?.toLowerCase())) {
        throw BadRequest.field('ciphers', 'Every item must be moved into the same organization.');
      }
      const shared = await shareItems(userId, client, body.ciphers.map((cipher) => ({ id: cipher.id, request: cipher })), organizationId, body.collectionIds);
      return shared.map((row) => cipherMiniJson(row, apiBase));
    },

    /**
     * `PUT /ciphers/{id}/collections(_v2)`: the caller sets the collections of an organization
     * item they may edit. Collections they cannot write to keep the item as it is (as
     * Bitwarden's non-admin update does). Returns the item as the caller now sees it, in the
     * details form, or undefined when it left all of their collections.
     */
    async updateCollections(caller: UserCaller, id: string, ids: string[]): Promise<string | undefined> {
      const seen = await setCollections(caller, id, ids);
      return seen && details(seen);
    },

    /** `PUT /ciphers/{id}/collections_v2`: the same change, answered as OptionalCipherDetailsResponseModel. */
    async updateCollectionsV2(caller: UserCaller, id: string, ids: string[]): Promise<string> {
      const seen = await setCollections(caller, id, ids);
      return `{"object":"optionalCipherDetails","unavailable":${seen ? 'false' : 'true'},"cipher":${seen ? details(seen) : 'null'}}`;
    },

    /** `POST /ciphers/bulk-collections`: adds or removes collections on many items the caller may edit. */
    async bulkCollections(
      { userId, client }: UserCaller,
      body: { organizationId: string; cipherIds: string[]; collectionIds: string[]; removeCollections?: boolean | null },
    ): Promise<void> {
      const cipherIds = normalizeIds(body.cipherIds, 'cipherIds', false);
      const collectionIds = normalizeIds(body.collectionIds, 'collectionIds', true);
      if (cipherIds.length === 0) throw BadRequest.field('cipherIds', 'You must select at least one item.');
      await db.transaction().execute(async (tx) => {
        const membership = await memberOf(tx, body.organizationId, userId, 'organizationId');
        const reached = await collectionsIn(tx, userId, membership.organizationId, collectionIds, 'collectionIds');
        assertWritable(reached, collectionIds, 'collectionIds');
        // All or nothing: an item the caller cannot see in this organization is unknown, one they
        // may only look at is refused, as for a single item.
        const rows = (await visibleCiphers(tx, userId, cipherIds)).filter((r) => r.organization_id === membership.organizationId);
        if (rows.length !== cipherIds.length) throw new NotFound('One or more items were not found in this organization.');
        if (!rows.every((r) => can(r, 'assign'))) throw BadRequest.field('cipherIds', 'You do not have permission to change the collections of one or more items.');
        const targets = rows.map((r) => r.id);
        const now = clock.now().toISOString();
        // The items first, in one statement: the assignments' triggers then stamp rows this
        // transaction holds already (migration 0021), rather than lock them one by one in the
        // order of the pairs, which a concurrent bulk write may lock in another.
        await setRevisionDate(tx, targets, now);
        if (body.removeCollections) {
          await tx.deleteFrom('collection_ciphers').where('cipher_id', 'in', targets).where('collection_id', 'in', collectionIds).execute();
        } else {
          const pairs = rows.flatMap((r) => collectionIds.filter((c) => !r.access?.collectionIds.includes(c)).map((c) => ({ collection_id: c, cipher_id: r.id })));
          // An item may already be in a collection the caller does not see; skip existing pairs.
          if (pairs.length > 0) {
            await tx.insertInto('collection_ciphers').values(pairs).onConflict((oc) => oc.columns(['collection_id', 'cipher_id']).doNothing()).execute();
          }
        }
        await audit.record(tx, client, cipherEvents(EventType.Cipher_UpdatedCollections, userId, rows));
        await touchRevisions(tx, userId, rows, now);
      });
    },

    /**
     * `POST /ciphers/admin`: the admin console creates an item, only for members who edit every
     * item of the organization (the official CanEditAllCiphers; 404 for anyone else), in any of
     * its collections or in none. The caller's folder and favorite are not set. Answers its mini form.
     */
    async createAsAdmin({ userId, client }: UserCaller, body: { cipher: CipherRequest; collectionIds: string[] }): Promise<string> {
      const request = { ...body.cipher, folderId: null, favorite: false };
      const data = serializeCipherData(toCipherData(request));
      const collectionIds = normalizeIds(body.collectionIds, 'collectionIds', false);
      if (!request.organizationId) throw BadRequest.field('cipher.organizationId', 'The organization is required.');
      const organizationId = request.organizationId;
      const created = await db.transaction().execute(async (tx) => {
        const membership = await adminMembership(tx, organizationId, userId);
        if (!membership || !(await editsEveryItem(tx, membership))) throw new NotFound();
        await collectionsIn(tx, userId, membership.organizationId, collectionIds, 'collectionIds');
        const id = await insertItem(tx, userId, client, membership.organizationId, request, data, collectionIds);
        const [row] = await organizationDetails(tx, userId, membership.organizationId, [id]);
        if (!row) throw new NotFound();
        return row;
      });
      await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherCreate, created, client.deviceIdentifier, collectionIds));
      return cipherMiniJson(created, apiBase);
    },

    /**
     * `PUT /ciphers/{id}/collections-admin`: an admin of the organization (admin-ciphers.ts) sets
     * exactly the item's collections. One who edits every item may name any collection of the
     * organization; a restricted admin only collections they may write to (404 otherwise, as the
     * official CanEditItemsInCollections). Answers the item with all its collections.
     */
    async updateCollectionsAsAdmin({ userId, client }: UserCaller, id: string, ids: string[]): Promise<string> {
      const collectionIds = normalizeIds(ids, 'collectionIds', false);
      const updated = await db.transaction().execute(async (tx) => {
        const existing = await cipherAsAdmin(tx, userId, id);
        const organizationId = existing.organization_id as string;
        const reached = await collectionsIn(tx, userId, organizationId, collectionIds, 'collectionIds');
        const membership = await adminMembership(tx, organizationId, userId);
        if (!membership) throw new NotFound();
        if (!(await editsEveryItem(tx, membership)) && !collectionIds.every((c) => reached.has(c) && writable(reached.get(c) as ReachedCollection))) throw new NotFound();
        const current = await collectionIdsOf(tx, existing.id);
        const removed = current.filter((c) => !collectionIds.includes(c));
        const added = collectionIds.filter((c) => !current.includes(c));
        const now = clock.now().toISOString();
        await setRevisionDate(tx, [existing.id], now);
        if (removed.length > 0) await tx.deleteFrom('collection_ciphers').where('cipher_id', '=', existing.id).where('collection_id', 'in', removed).execute();
        if (added.length > 0) await tx.insertInto('collection_ciphers').values(added.map((c) => ({ collection_id: c, cipher_id: existing.id }))).execute();
        await audit.record(tx, client, cipherEvents(EventType.Cipher_UpdatedCollections, userId, [existing]));
        await touchRevisions(tx, userId, [existing], now);
        const [row] = await organizationDetails(tx, userId, organizationId, [existing.id]);
        return { row: row as CipherRow, before: current };
      });
      // To everyone who sees the item now, and to those of the collections it left.
      await sendBuilt(pushes, () => cipherPushes(db, PushType.SyncCipherUpdate, updated.row, client.deviceIdentifier, [...new Set([...updated.before, ...collectionIds])]));
      return miniDetails(updated.row);
    },

    /**
     * `GET /ciphers/{id}/admin`: an organization item for an admin or a manager: a member who
     * may view all items or edit or delete any collection (the official ViewAllCollections), or
     * who manages a collection holding it. Everyone else gets 404, as for an id that does not exist.
     */
    async adminGet({ userId }: UserCaller, id: string): Promise<string> {
      const row = await db.selectFrom('ciphers').select(['id', 'organization_id']).where('id', '=', id.toLowerCase()).executeTakeFirst();
      if (!row?.organization_id) throw new NotFound();
      const membership = await confirmedMembership(db, row.organization_id, userId);
      if (!membership) throw new NotFound();
      const collectionIds = await collectionIdsOf(db, row.id);
      if (!VIEWS_ANY_ITEM.some((right) => membership.rights.has(right))) {
        const reached = (await reachedCollections(db, userId)).filter((c) => c.grant.manage);
        if (!reached.some((c) => collectionIds.includes(c.id))) throw new NotFound();
      }
      const [full] = await organizationDetails(db, userId, row.organization_id, [row.id]);
      if (!full) throw new NotFound();
      return miniDetails(full);
    },

    /**
     * `GET /ciphers/organization-details`: every item of the organization, for members who may
     * view all items or edit any collection, and for those who export the organization's vault
     * or read its reports (the official CanAccessAllCiphers). 404 for anyone not a confirmed member.
     */
    async organizationItems({ userId }: UserCaller, organizationId: string): Promise<string[]> {
      const membership = await memberIn(organizationId, userId);
      if (!LISTS_ALL_ITEMS.some((right) => membership.rights.has(right))) {
        throw new Forbidden('You do not have permission to view all items of this organization.');
      }
      return (await organizationDetails(db, userId, membership.organizationId)).map(miniDetails);
    },

    /** `GET /ciphers/organization-details/assigned`: the organization's items in collections assigned to the caller. */
    async assignedItems({ userId }: UserCaller, organizationId: string): Promise<string[]> {
      const membership = await memberIn(organizationId, userId);
      return (await accessibleItemsIn(db, userId, membership.organizationId)).map(miniDetails);
    },
  };
}

async function accessibleItemsIn(db: Executor, userId: string, organizationId: string): Promise<CipherRow[]> {
  const reached = (await reachedCollections(db, userId)).filter((c) => c.organizationId === organizationId);
  return organizationItems(db, userId, reached);
}

export type OrgCipherService = ReturnType<typeof createOrgCipherService>;
