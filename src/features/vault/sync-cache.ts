import { createByteLru } from '../../shared/byte-lru.js';
import type { Releasable } from '../../shared/cache-release.js';
import { createItemJsonCache, type ItemJsonCache } from './item-json-cache.js';
import type { SectionItems } from './section-items.js';

/**
 * What sync keeps between answers, in two parts sharing one byte budget:
 * - the vault sections (folders and the items' JSON) per user, under a key of everything the
 *   items' per-user parts depend on besides the rows (for vaults with organization collections:
 *   the reached collections and their grants, the organizations' flags; see sync-vault.ts,
 *   sectionKey), with the vault revision (see revisions.ts) and the change marks they were
 *   built at. Clients sync on login, on unlock and on every device after each change, and all
 *   but the first of those find nothing changed and skip even listing the items. What changed
 *   is read from the database on every sync (the revision, and for organization vaults the
 *   stamps of organization items and of the user's settings of them), so a section is never
 *   served after a change made by any instance; the first sync after a change patches the
 *   user's last section with the items written since its marks (migrations 0020 and 0021);
 * - `items`: the encoded shared part of organization items under their id and version
 *   (item-json-cache.ts), so that an item changed, or a section built or patched, is encoded
 *   once for all the members who see it, not once per member.
 * Each part is bounded by half the budget; the least recently used entries go first, and
 * entries no sync has used for CACHE_IDLE_MINUTES are dropped (cache-release.ts). A section is
 * used when it is served or patched; an item's entry when a sync builds or patches a section
 * with it, not when a cached section is sent as it is.
 */
export interface VaultSection {
  revision: number;
  /**
   * Everything else its items' per-user parts depend on: '' for a vault without organization
   * collections; else the reached collections with their grants and their organizations' flags
   * (sync-vault.ts, sectionKey). A section is patched only under the same key.
   */
  key: string;
  /**
   * The change mark taken before its items were read (revisions.ts, changeMark): a patch reads
   * the personal items, and the user's settings of organization items, stamped above it.
   */
  since: number;
  /** The mark for organization items (revisions.ts, changeMarks: `shared`); 0 without organization collections. */
  sharedSince: number;
  /** Which of its items are organization items (the others are the user's own). */
  organizationItemIds: ReadonlySet<string>;
  /** The highest item type in it: a client is not sent the types newer than it reads (sync.schemas.ts, newestItemType). */
  newestType: number;
  folders: string;
  /**
   * The ids of those folders. A patch lists the vault whole when one of them is gone: a folder's
   * deletion clears its items' folder through the foreign key, and on PostgreSQL an item filed
   * into it while the deletion ran is cleared without a stamp a patch would see.
   */
  folderIds: readonly string[];
  /** The items by id, for a patch; the items array as sync sends it is `items.chunks()`. */
  items: SectionItems;
}

/** Its `dropUnused` covers the sections and the items' JSON. */
export interface SyncCache extends Releasable {
  /** Off (a budget of 0): every sync reads and encodes every item in one pass. */
  readonly enabled: boolean;
  /** Bytes of items a section may hold and still be kept: a larger vault is sent as it is read (section-items.ts, SpilledItems). */
  readonly sectionBudget: number;
  /** What the budget counts for each item of a section besides its JSON (its id, its place in a page's index). */
  readonly itemBytes: number;
  items: ItemJsonCache;
  /** The user's last section, whatever its revision and key: served as it is when nothing changed since, else patched. */
  get(userId: string, newestType: number): VaultSection | undefined;
  set(userId: string, section: VaultSection): void;
  /** Forgets the user's last section (their vault outgrew what is kept). */
  drop(userId: string, newestType: number): void;
  /** Counts a sync served from a section as it is (a hit) or not (the metrics' hit rate). */
  served(hit: boolean): void;
}

/** Bytes of bookkeeping per item of a patchable section (its id, its place in a page's index), roughly. */
const ITEM_OVERHEAD = 100;
/** And per organization item, its entry in `organizationItemIds` (the id string is the page's). */
const ORGANIZATION_ITEM_OVERHEAD = 40;

/** `onLookup` hears whether each sync was served from a section as it was (the metrics' hit rate). */
export function createSyncCache(maxBytes: number, onLookup: (hit: boolean) => void = () => undefined): SyncCache {
  const sectionBytes = (s: VaultSection) =>
    s.folders.length + s.items.chunks().reduce((sum, chunk) => sum + chunk.length, 0) + s.items.count * ITEM_OVERHEAD + s.organizationItemIds.size * ORGANIZATION_ITEM_OVERHEAD;
  const sectionBudget = Math.floor(maxBytes / 2);
  const entries = createByteLru<VaultSection>(sectionBudget, sectionBytes);
  const keyOf = (userId: string, newestType: number) => `${userId}:${newestType}`;
  const items = createItemJsonCache(Math.floor(maxBytes / 2));
  return {
    enabled: maxBytes > 0,
    sectionBudget,
    itemBytes: ITEM_OVERHEAD,
    items,
    get(userId, newestType) {
      return entries.get(keyOf(userId, newestType));
    },
    served: onLookup,
    set(userId, section) {
      entries.set(keyOf(userId, section.newestType), section);
    },
    drop(userId, newestType) {
      entries.delete(keyOf(userId, newestType));
    },
    dropUnused: () => entries.dropUnused() + items.dropUnused(),
  };
}
