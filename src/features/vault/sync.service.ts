import { chunks } from '../../db/chunks.js';
import type { Db } from '../../db/database.js';
import type { Engine } from '../../db/dialect.js';
import { Unauthorized } from '../../http/errors.js';
import { type UserRow } from '../accounts/accounts.repository.js';
import { findUserWithTwoFactor } from '../two-factor/two-factor.repository.js';
import { collectionsForUser } from '../collections/collections.repository.js';
import { toCollectionDetails, type CollectionDetailsResponse } from '../collections/collections.schemas.js';
import type { ProfileOrganizationResponse } from '../organizations/organizations.schemas.js';
import { profileOrganizations } from '../organizations/profile-organizations.js';
import type { PolicyResponse } from '../policies/policies.schemas.js';
import { policiesForUser } from '../policies/policies.service.js';
import { findPersonalCiphers, findSharedColumns, listPersonalIds, listPersonalVersions, personalChangesSince, type CipherRow } from './ciphers.repository.js';
import { CipherType, cipherSharedJson, cipherUserJson, type SharedCipherColumns } from './ciphers.schemas.js';
import { listFolders } from './folders.repository.js';
import { organizationItems, organizationItemVersions, type ReachedCollection } from './org-items.js';
import { changeMark, vaultRevision } from './revisions.js';
import type { SyncCache, VaultSection } from './sync-cache.js';
import { sectionItemsWriter, type SectionItems } from './section-items.js';
import { foldersJson, syncItemStart } from './sync.schemas.js';
import { listSends } from '../sends/sends.repository.js';
import { toSendResponse, type SendResponse } from '../sends/sends.schemas.js';

export interface SyncData {
  user: UserRow & { two_factor_enabled?: boolean };
  vault: VaultSection;
  organizations: ProfileOrganizationResponse[];
  collections: CollectionDetailsResponse[];
  policies: PolicyResponse[];
  /** The user's Sends, read afresh (they are not part of the cached vault section). */
  sends: SendResponse[];
}

/** Bitwarden hides SSH keys from clients older than 2024.12 (or that send no version). */
const shown = (type: number, withSshKeys: boolean) => withSshKeys || type !== (CipherType.SSHKey as number);

/**
 * Everything a client caches, read in a fixed number of queries however large the vault (plus
 * one per slice of 500 items read, or of 500 listed items that holds changed ones): the user
 * and the vault revision, the confirmed memberships, the policies, the reachable collections,
 * then (unless the cache holds this revision) the folders and the items. Organization items reach sync only
 * through the user's collections: an Owner or Admin sees unassigned items in the admin views,
 * not here.
 *
 * Whole sections are kept only for vaults without organization collections (other members'
 * changes to organization items move no vault revision of this user). The first sync after a
 * change of such a vault reads only the personal items written since its last section's
 * revision and patches that section (patch below, migration 0020), so its cost grows with what
 * changed, not with the vault; without a section to patch it is read in one pass. Vaults with
 * organization collections are listed: items by id and version with the user's settings and
 * rights, without their contents; only those whose encoded shared part is not cached at that
 * version are read and encoded (see item-json-cache.ts).
 */
export function createSyncService({
  db,
  engine,
  cache,
  apiBase,
}: {
  db: Db;
  engine: Engine;
  cache: SyncCache;
  /** Base of the attachment URLs in items (files/attachment-data.ts). */
  apiBase: string;
}) {
  /**
   * Every item read and encoded in one pass, without the item cache: the path of vaults without
   * organization collections that have no section to patch, and of every vault with the cache
   * off. Personal items are read a slice of ids at a time, so that besides the answer being
   * written only one slice's rows are held (reading a 10,000-item vault at once grew V8's heap
   * by the vault's size). An item deleted meanwhile is left out, one created meanwhile is
   * stamped above the section's mark and patched in by the next sync.
   */
  async function readItems(userId: string, reached: readonly ReachedCollection[], withSshKeys: boolean): Promise<SectionItems> {
    const writer = sectionItemsWriter();
    const add = (row: CipherRow) => {
      if (shown(row.type, withSshKeys)) writer.add(row.id, encodedStart(row), cipherUserJson(row, 'cipherDetails'));
      else writer.hide(row.id);
    };
    // An item is either the user's own or an organization's (sharing moves it), never both.
    for (const slice of chunks(await listPersonalIds(db, userId))) (await findPersonalCiphers(db, userId, slice)).forEach(add);
    (await organizationItems(db, userId, reached)).forEach(add);
    return writer.finish();
  }

  /** An item's JSON in sync up to the user's part, encoded afresh (see syncItemStart). */
  function encodedStart(row: SharedCipherColumns): Buffer {
    return syncItemStart(cipherSharedJson(row, apiBase));
  }

  /** An item's shared part from the cache at its version, else encoded (and kept). */
  function startOf(row: SharedCipherColumns & { version: number }): Buffer {
    const cached = cache.items.get(row.id, row.version);
    if (cached) return cached;
    const start = encodedStart(row);
    cache.items.set(row.id, row.version, start);
    return start;
  }

  /**
   * The items listed by version, their shared parts from the cache where current, else read and
   * encoded, a slice of the listing at a time: besides the answer being written, only one
   * slice's rows are held, however large the vault. A row changed between the listing and its
   * read (the listing's rights may be older than its content: access revoked, then the item
   * edited) sends this sync to readItems, which reads organization items and access in one query.
   */
  async function listItems(userId: string, reached: readonly ReachedCollection[], withSshKeys: boolean): Promise<SectionItems> {
    const [personal, org] = await Promise.all([listPersonalVersions(db, userId), organizationItemVersions(db, userId, reached)]);
    const writer = sectionItemsWriter();
    for (const slice of chunks([...personal, ...org])) {
      const starts = new Map<string, Buffer>();
      for (const item of slice) {
        const start = cache.items.get(item.id, item.version);
        if (start !== undefined) starts.set(item.id, start);
      }
      // One deleted since the listing is left out.
      const missing = new Map(slice.filter((item) => !starts.has(item.id) && shown(item.type, withSshKeys)).map((item) => [item.id, item.version]));
      for (const row of await findSharedColumns(db, [...missing.keys()])) {
        const start = startOf(row);
        if (row.version !== missing.get(row.id)) return readItems(userId, reached, withSshKeys);
        starts.set(row.id, start);
      }
      for (const item of slice) {
        const start = starts.get(item.id);
        if (!shown(item.type, withSshKeys)) writer.hide(item.id);
        else if (start) writer.add(item.id, start, cipherUserJson(item, 'cipherDetails'));
      }
    }
    return writer.finish();
  }

  /**
   * `base`, a section of a vault without organization collections, brought to `revision` with
   * the personal items written since its mark (each row records a stamp of its last write above
   * the mark of any sync that started before it, migration 0020): only those are read and
   * encoded, and only the pages of the section holding them are rebuilt (section-items.ts).
   * Items that left the vault since (deleted for good, or shared to an organization) leave no
   * row to read: when the count says some did, the vault's ids are read to find them.
   * Undefined, and the vault is listed whole, when a folder of the section is gone (see
   * VaultSection.folderIds) or the ids do not account for the count exactly: an item that
   * changed and then left between the two reads, or one written without a stamp (another
   * release, a hand-made write; see migration 0020). Folders are few and always read again.
   */
  async function patch(userId: string, base: VaultSection, revision: number, since: number): Promise<VaultSection | undefined> {
    const [folders, { total, rows }] = await Promise.all([listFolders(db, userId), personalChangesSince(db, userId, base.since)]);
    const folderIds = folders.map((f) => f.id);
    if (base.folderIds.some((id) => !folderIds.includes(id))) return undefined;
    // Checked before anything is encoded. `rows` and `total` come from one statement: with
    // every write stamped, the section's items less those gone plus the new ones are `total`.
    const added = rows.filter((row) => !base.items.has(row.id)).length;
    let removed = new Set<string>();
    if (base.items.count + added !== total) {
      const now = new Set(await listPersonalIds(db, userId));
      removed = new Set(base.items.ids().filter((id) => !now.has(id)));
      if (base.items.count - removed.size + added !== total) return undefined;
    }
    const changes = new Map(rows.map((row) => [row.id, shown(row.type, base.withSshKeys) ? itemJson(row) : null]));
    return { revision, since, withSshKeys: base.withSshKeys, folders: foldersJson(folders), folderIds, items: base.items.with(changes, removed) };
  }

  /**
   * A personal item's whole JSON in sync (see section-items.ts). Not kept in the item cache: only
   * this user sees it, and their cached section holds it already.
   */
  function itemJson(row: CipherRow & { version: number }): Buffer {
    return Buffer.concat([encodedStart(row), Buffer.from(`${cipherUserJson(row, 'cipherDetails')}}`)]);
  }

  return {
    async load(userId: string, options: { withSshKeys: boolean }): Promise<SyncData> {
      // The revision is read before the vault: a change landing in between makes the stored
      // section newer than its revision, which costs one extra read later, never a stale answer.
      const [user, revision, organizations, policies, collections, sends] = await Promise.all([
        findUserWithTwoFactor(db, userId),
        vaultRevision(db, userId),
        profileOrganizations(db, userId),
        policiesForUser(db, userId),
        collectionsForUser(db, userId),
        listSends(db, userId),
      ]);
      // A valid token of an account deleted since it was issued.
      if (!user) throw new Unauthorized();
      const shared = { organizations, collections: collections.map(({ row, grant }) => toCollectionDetails(row, grant)), policies, sends: sends.map(toSendResponse) };
      const cacheable = collections.length === 0;
      const cached = cacheable ? cache.get(userId, revision, options.withSshKeys) : undefined;
      if (cached?.revision === revision) return { user, vault: cached, ...shared };
      // Taken before any item is read: what is written later is stamped above it.
      const since = cacheable && cache.enabled ? await changeMark(db, engine, revision) : 0;
      const patched = cached ? await patch(userId, cached, revision, since) : undefined;
      if (patched) {
        cache.set(userId, patched);
        return { user, vault: patched, ...shared };
      }

      const reached = collections.map(({ row, grant }) => ({ id: row.id, organizationId: row.organization_id, grant }));
      // A vault without organization collections is read in one pass: its items are personal,
      // seen by no one else, and its section (when within the budget) holds them; keeping their
      // shared parts in the item cache too would hold them twice.
      const items = cache.enabled && !cacheable ? listItems : readItems;
      const [folders, read] = await Promise.all([listFolders(db, userId), items(userId, reached, options.withSshKeys)]);
      const vault: VaultSection = { revision, since, withSshKeys: options.withSshKeys, folders: foldersJson(folders), folderIds: folders.map((f) => f.id), items: read };
      if (cacheable) cache.set(userId, vault);
      return { user, vault, ...shared };
    },
  };
}

export type SyncService = ReturnType<typeof createSyncService>;
