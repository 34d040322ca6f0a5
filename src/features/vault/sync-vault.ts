import { chunks } from '../../db/chunks.js';
import type { Db } from '../../db/database.js';
import type { Engine } from '../../db/dialect.js';
import { compareText } from '../../shared/compare-text.js';
import { findPersonalCiphers, findSharedColumns, listPersonalIds, listPersonalVersions, personalChangesSince, type CipherRow, type ItemVersion } from './ciphers.repository.js';
import { cipherSharedJson, cipherUserJson, type SharedCipherColumns } from './ciphers.schemas.js';
import { listFolders, type FolderRow } from './folders.repository.js';
import { toFolderResponse } from './folders.schemas.js';
import { organizationChangesSince, organizationItemIds, organizationItems, organizationItemVersions, type ReachedCollection } from './org-items.js';
import { changeMark, changeMarks } from './revisions.js';
import type { SyncCache, VaultSection } from './sync-cache.js';
import { sectionItemsWriter, SpilledItems, type SectionItems } from './section-items.js';

/**
 * A vault larger than the sync cache keeps (its section budget): its items go to the answer as
 * they are read and are not kept (section-items.ts, SpilledItems), so that however large the
 * vault, the process holds about the budget and a few pages of it, not the whole answer.
 */
export interface SpilledVault {
  folders: string;
  items: SpilledItems;
}

/** Whether `vault` is a section that can be kept (not spilled). */
export const isSection = (vault: VaultSection | SpilledVault): vault is VaultSection => !(vault.items instanceof SpilledItems);

/** Whether an item goes to a client that reads the types up to `newestType` (sync.schemas.ts, newestItemType). */
const shown = (type: number, newestType: number) => type <= newestType;

/** The folders' JSON in sync, encoded once per section. */
export function foldersJson(folders: readonly FolderRow[]): string {
  return JSON.stringify(folders.map(toFolderResponse));
}

/**
 * An item's JSON in sync up to the user's part: the opening and the shared part (cipherSharedJson).
 * In a buffer of its own, exactly its size: Buffer.from would place a short text in Node's shared
 * 8 KB pool, and a cached item would keep that whole block alive (item-json-cache.ts counts bytes).
 */
export function syncItemStart(sharedJson: string): Buffer {
  const text = `{"object":"cipherDetails",${sharedJson}`;
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  bytes.write(text);
  return bytes;
}

/**
 * The vault part of sync (its folders and items), apart from the rest of the answer
 * (sync.service.ts), read in a fixed number of queries however large the vault (plus one per
 * slice of 500 items read, and for a vault with organization collections listed by version, one
 * per page of 5,000 organization items and one per slice that holds items changed since the
 * listing). Organization items reach sync only through the user's collections: an Owner or
 * Admin sees unassigned items in the admin views, not here.
 *
 * Each user's last answer is kept as a section (sync-cache.ts) under a key of what its per-user
 * parts depend on besides the rows (sectionKey: the reached collections with their grants and
 * their organizations' flags; '' for a vault without organization collections), with the
 * marks taken before its items were read (revisions.ts). Every sync reads what changed since
 * from the database, so that no instance ever serves a section another instance's write made
 * stale:
 * - a vault without organization collections: its vault revision (every write to the user's
 *   items, folders and settings moves it). Unchanged, the section is served as it is.
 * - a vault with organization collections: also the organization items stamped above the
 *   section's marks (other members' edits, collection assignments, removals for good; migration
 *   0021), two index range scans and a one-row lookup that find nothing when nothing changed.
 * Otherwise the section is patched (patch below): only the items written since are read, and
 * only the pages of the section holding them are rebuilt (section-items.ts), so the cost of a
 * change grows with the change, not with the vault. A different key (a grant or a membership
 * changed, a collection given or taken, an organization's settings changed), a missing section
 * or a patch whose counts do not add up rebuilds the vault: a vault without organization
 * collections is read in one pass; one with them is listed by id and version, and only the
 * items whose encoded shared part is not cached at that version are read and encoded (see
 * item-json-cache.ts, shared by all the members of an organization).
 */
export function createSyncVault({
  db,
  engine,
  cache,
  apiBase,
  listingPage = 5000,
}: {
  db: Db;
  engine: Engine;
  cache: SyncCache;
  /** Base of the attachment URLs in items (files/attachment-data.ts). */
  apiBase: string;
  /** Organization items listed at once by a sync that lists the vault (listItems), their ids in one `in` list. */
  listingPage?: number;
}) {
  /** A vault's items as read whole, and which of them are organization items. */
  interface ReadVault {
    items: SectionItems;
    organizationItemIds: ReadonlySet<string>;
  }

  /**
   * Every item read and encoded in one pass, without the item cache: the path of vaults without
   * organization collections that have no section to patch, and of every vault with the cache
   * off. Personal items are read a slice of ids at a time, so that besides the answer being
   * written only one slice's rows are held (reading a 10,000-item vault at once grew V8's heap
   * by the vault's size). An item deleted meanwhile is left out, one created meanwhile is
   * stamped above the section's mark and comes with the next sync (patched in, or read again
   * when the vault is not kept). With a `writer` that spills (see build), each slice waits until
   * the answer has taken the pages before it: the reading then lasts as long as the answer.
   */
  async function readItems(userId: string, reached: readonly ReachedCollection[], newestType: number, writer = sectionItemsWriter()): Promise<ReadVault> {
    const add = (row: CipherRow) => {
      if (shown(row.type, newestType)) writer.add(row.id, encodedStart(row), cipherUserJson(row, 'cipherDetails'));
      else writer.hide(row.id);
    };
    // An item is either the user's own or an organization's (sharing moves it), never both.
    for (const slice of chunks(await listPersonalIds(db, userId))) {
      (await findPersonalCiphers(db, userId, slice)).forEach(add);
      await writer.pace();
    }
    const organization = await organizationItems(db, userId, reached);
    organization.forEach(add);
    return { items: writer.finish(), organizationItemIds: new Set(organization.map((row) => row.id)) };
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
   * slice's rows are held. The personal items are listed at once; the ids of the organization
   * items are read at the same time, and those items listed a page of `listingPage` ids at a
   * time (the listing holds each item's rights, and a large vault's whole listing took more
   * memory than its answer). An item that enters the user's reach later comes with the next
   * sync. An item whose row changed between the listing and its read is read again with the
   * user's part in one query (currentRows): the listing's rights may be older than its content
   * (access revoked, then the item edited), and an item no longer reached, or no longer the
   * user's, is left out; a personal item shared meanwhile is listed with the organization items
   * instead. With a `writer` that spills (see build), each slice waits until the answer has
   * taken the pages before it.
   */
  async function listItems(userId: string, reached: readonly ReachedCollection[], newestType: number, writer = sectionItemsWriter()): Promise<ReadVault> {
    const writtenOrganizationIds = new Set<string>();
    /** Writes `listed` (personal or organization items); answers the ids it left out because their row changed and they are not there as such any more. */
    const write = async (listed: readonly ItemVersion[], inOrganization: boolean): Promise<string[]> => {
      const gone: string[] = [];
      for (const slice of chunks(listed)) {
        const starts = new Map<string, Buffer>();
        for (const item of slice) {
          const start = cache.items.get(item.id, item.version);
          if (start !== undefined) starts.set(item.id, start);
        }
        // One deleted since the listing is left out.
        const missing = new Map(slice.filter((item) => !starts.has(item.id) && shown(item.type, newestType)).map((item) => [item.id, item.version]));
        const changed = new Set<string>();
        for (const row of await findSharedColumns(db, [...missing.keys()])) {
          if (row.version === missing.get(row.id)) starts.set(row.id, startOf(row));
          else changed.add(row.id);
        }
        const reread = await currentRows(userId, reached, [...changed], inOrganization);
        for (const item of slice) {
          const now = reread.get(item.id);
          if (changed.has(item.id) && !now) {
            gone.push(item.id);
            continue;
          }
          // The item as read again when it changed, else as listed.
          const current = now?.row ?? item;
          const start = now ? now.start : starts.get(item.id);
          if (!shown(current.type, newestType)) writer.hide(item.id);
          else if (start) writer.add(item.id, start, cipherUserJson(current, 'cipherDetails'));
          else continue;
          if (inOrganization) writtenOrganizationIds.add(item.id);
        }
        await writer.pace();
      }
      return gone;
    };
    const [personal, inOrganizations] = await Promise.all([listPersonalVersions(db, userId), organizationItemIds(db, reached)]);
    // An item listed both ways was shared between the two reads (sharing is one way): it is an
    // organization item now.
    const sharedMeanwhile = await write(
      personal.filter((item) => !inOrganizations.has(item.id)),
      false,
    );
    for (const id of sharedMeanwhile) inOrganizations.add(id);
    // Each page's ids and the reached collections are bound one parameter each: 5,000 ids leave
    // room for about 27,000 collections under SQLite's 32,766.
    for (const page of chunks([...inOrganizations], Math.max(1, listingPage))) await write(await organizationItemVersions(db, userId, reached, page), true);
    return { items: writer.finish(), organizationItemIds: writtenOrganizationIds };
  }

  /**
   * Items as they are now, with the user's part and their encoded shared part: organization
   * items through the reached collections (so with the rights they give now), or personal ones;
   * those of `ids` that are still in the vault as such.
   */
  async function currentRows(userId: string, reached: readonly ReachedCollection[], ids: readonly string[], inOrganization: boolean): Promise<Map<string, { row: CipherRow; start: Buffer }>> {
    if (ids.length === 0) return new Map();
    if (inOrganization) return new Map((await organizationItems(db, userId, reached, ids)).map((row) => [row.id, { row, start: startOf(row) }]));
    return new Map((await findPersonalCiphers(db, userId, ids)).map((row) => [row.id, { row, start: encodedStart(row) }]));
  }

  /**
   * A vault read whole into a section, with the marks taken before (see load); or, for a vault
   * that outgrows the cache's section budget, a SpilledVault whose items are still being read
   * while the answer is sent (it could not be kept anyway). A vault with organization
   * collections is listed by version (listItems), one without read in one pass (readItems): its
   * items are personal, seen by no one else, and its section (when within the budget) holds
   * them; keeping their shared parts in the item cache too would hold them twice. The folders
   * are read first: the answer may start before the items are all read.
   */
  async function build(userId: string, revision: number, key: string, marks: Marks, reached: readonly ReachedCollection[], newestType: number): Promise<VaultSection | SpilledVault> {
    const folders = await listFolders(db, userId);
    const writer = sectionItemsWriter(cache.enabled ? { keepBytes: cache.sectionBudget, itemBytes: cache.itemBytes } : {});
    const reading = (cache.enabled && reached.length > 0 ? listItems : readItems)(userId, reached, newestType, writer);
    // Whichever comes first: the items passing the budget, or all of them read.
    await Promise.race([writer.spilled, reading]);
    const spilled = writer.spilledItems();
    if (spilled) {
      // The rest is read while the answer is sent; a failure (or the client gone) ends the answer.
      void reading.catch((error: unknown) => spilled.fail(error));
      return { folders: foldersJson(folders), items: spilled };
    }
    const read = await reading;
    return {
      revision,
      key,
      since: marks.personal,
      sharedSince: marks.shared,
      newestType,
      folders: foldersJson(folders),
      folderIds: folders.map((f) => f.id),
      organizationItemIds: read.organizationItemIds,
      items: read.items,
    };
  }

  /**
   * `base`, the user's last section under the same key, brought to `revision` and the new
   * `marks` with what was written since its marks (each write stamps its rows above the mark of
   * any sync that started before it, migrations 0020 and 0021): only those items are read and
   * encoded, and only the pages of the section holding them are rebuilt (section-items.ts).
   * - Personal items: those stamped above the section's `since`. Items that left the vault
   *   since (deleted for good, or shared to an organization) leave no row to read: when the
   *   count of personal items says some did, the user's ids are read to find them.
   * - Organization items: `changes` (organizationChangesSince), read again with the user's
   *   rights and collection ids through the section's reached collections (the same key);
   *   those no longer reached leave the section. When an item of those organizations was
   *   deleted for good, the reached ids are read to find which.
   * Undefined, and the vault is read whole, when a folder of the section is gone (see
   * VaultSection.folderIds) or the personal ids do not account for the count exactly: an item
   * that changed and then left between the two reads, or one written without a stamp (another
   * release, a hand-made write; see migration 0020). Folders are few and always read again.
   */
  async function patch(
    userId: string,
    base: VaultSection,
    revision: number,
    marks: Marks,
    reached: readonly ReachedCollection[],
    changes: { ids: readonly string[]; removals: boolean },
  ): Promise<VaultSection | undefined> {
    const [folders, { total, rows }] = await Promise.all([listFolders(db, userId), personalChangesSince(db, userId, base.since)]);
    const folderIds = folders.map((f) => f.id);
    if (base.folderIds.some((id) => !folderIds.includes(id))) return undefined;
    // An organization item never becomes personal; were one to, the vault is read whole.
    if (rows.some((row) => base.organizationItemIds.has(row.id))) return undefined;
    // Checked before anything is encoded. `rows` and `total` come from one statement: with
    // every write stamped, the section's personal items less those gone plus the new ones are `total`.
    const personalCount = base.items.count - base.organizationItemIds.size;
    const added = rows.filter((row) => !base.items.has(row.id)).length;
    const removed = new Set<string>();
    if (personalCount + added !== total) {
      const now = new Set(await listPersonalIds(db, userId));
      for (const id of base.items.ids()) if (!now.has(id) && !base.organizationItemIds.has(id)) removed.add(id);
      if (personalCount - removed.size + added !== total) return undefined;
    }
    const updates = new Map(rows.map((row) => [row.id, shown(row.type, base.newestType) ? itemJson(encodedStart(row), row) : null]));

    const organizationIds = new Set(base.organizationItemIds);
    if (changes.ids.length > 0) {
      const found = new Set<string>();
      for (const slice of chunks(changes.ids)) {
        for (const row of await organizationItems(db, userId, reached, slice)) {
          found.add(row.id);
          organizationIds.add(row.id);
          // Shared into the organization since: it left the personal items, and is here again.
          removed.delete(row.id);
          updates.set(row.id, shown(row.type, base.newestType) ? itemJson(startOf(row), row) : null);
        }
      }
      for (const id of changes.ids) {
        if (found.has(id) || !organizationIds.has(id)) continue;
        organizationIds.delete(id);
        removed.add(id);
      }
    }
    if (changes.removals) {
      const now = await organizationItemIds(db, reached);
      for (const id of organizationIds) {
        if (now.has(id)) continue;
        organizationIds.delete(id);
        updates.delete(id);
        removed.add(id);
      }
    }
    return {
      revision,
      key: base.key,
      since: marks.personal,
      sharedSince: marks.shared,
      newestType: base.newestType,
      folders: foldersJson(folders),
      folderIds,
      organizationItemIds: organizationIds,
      items: base.items.with(updates, removed),
    };
  }

  /**
   * An item's whole JSON in sync (see section-items.ts): its shared part (personal items encoded
   * afresh, as only this user sees them and their section holds them already; organization
   * items from the item cache, shared by the members), then the user's part.
   */
  function itemJson(start: Buffer, row: CipherRow): Buffer {
    return Buffer.concat([start, Buffer.from(`${cipherUserJson(row, 'cipherDetails')}}`)]);
  }

  /**
   * The user's vault from their cached section when nothing changed since (a hit), else that
   * section patched, else read whole; the result is kept for the next sync.
   */
  async function cachedVault(userId: string, revision: number, key: string, reached: readonly ReachedCollection[], newestType: number): Promise<VaultSection | SpilledVault> {
    const last = cache.get(userId, newestType);
    const base = last?.key === key ? last : undefined;
    let marks: Marks;
    let changes = { ids: [] as string[], removals: false };
    if (reached.length === 0) {
      if (base?.revision === revision) {
        cache.served(true);
        return base;
      }
      marks = { personal: await changeMark(db, engine, revision), shared: 0 };
    } else {
      // Taken before anything is read: what is written later is stamped above them.
      marks = await changeMarks(db, engine, revision);
      if (base) {
        changes = await organizationChangesSince(db, userId, [...new Set(reached.map((c) => c.organizationId))], { personal: base.since, shared: base.sharedSince });
        if (base.revision === revision && changes.ids.length === 0 && !changes.removals) {
          cache.served(true);
          return base;
        }
      }
    }
    cache.served(false);
    const vault = (base && (await patch(userId, base, revision, marks, reached, changes))) || (await build(userId, revision, key, marks, reached, newestType));
    // A vault that outgrew the budget leaves no section behind: patching one as old as that would
    // read every row written since, and then be refused anyway.
    if (isSection(vault)) cache.set(userId, vault);
    else cache.drop(userId, newestType);
    return vault;
  }

  return {
    /**
     * The user's folders and items at `revision` (read before them, see SyncService.load), as
     * a section to keep, or a SpilledVault still being read.
     */
    read(userId: string, revision: number, reached: readonly ReachedCollection[], newestType: number): Promise<VaultSection | SpilledVault> {
      return cache.enabled
        ? cachedVault(userId, revision, sectionKey(reached), reached, newestType)
        : build(userId, revision, '', { personal: 0, shared: 0 }, reached, newestType);
    },
  };
}

/** The marks a section was built or patched at (revisions.ts, changeMarks). */
interface Marks {
  personal: number;
  shared: number;
}

/**
 * Everything the per-user parts of a vault's organization items depend on besides the rows
 * (which are stamped, migration 0021): the reached collections with the user's grants
 * (readOnly, hidePasswords, manage: the rights and collection ids, accessOf), the flags of
 * their organizations (useTotp, limitItemDeletion) and so which organizations' items are read.
 * '' for a vault without organization collections. Those change rarely (an admin's edit); a
 * different key rebuilds the section rather than patch it.
 */
export function sectionKey(reached: readonly ReachedCollection[]): string {
  if (reached.length === 0) return '';
  const parts = [...reached]
    .sort((a, b) => compareText(a.id, b.id))
    .map((c) => {
      const { readOnly, hidePasswords, manage } = c.grant;
      return [c.id, c.organizationId, readOnly, hidePasswords, manage, c.organization?.useTotp ?? null, c.organization?.limitItemDeletion ?? null];
    });
  return JSON.stringify(parts);
}

export type SyncVault = ReturnType<typeof createSyncVault>;
