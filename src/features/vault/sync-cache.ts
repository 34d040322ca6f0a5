import { createByteLru } from '../../shared/byte-lru.js';
import { createItemJsonCache, type ItemJsonCache } from './item-json-cache.js';
import type { SectionItems } from './section-items.js';

/**
 * What sync keeps between answers, in two parts sharing one byte budget:
 * - `items`: the encoded shared part of each item of vaults with organization collections,
 *   under its id and version (item-json-cache.ts), so that after a change only the changed
 *   items are read and encoded again, once for all the members who see them (the items of
 *   other vaults are held by their user's section alone);
 * - the vault sections (folders and the items' JSON) per user, for vaults without organization
 *   collections, under the vault revision (see revisions.ts) they were built at: clients sync
 *   on login, on unlock and on every device after each change, and all but the first of those
 *   find the same revision and skip even listing the items. The revision is read from the
 *   database on every sync, so a section is never served after a change made by any instance;
 *   the first sync after a change patches the user's last section with the items written since
 *   its revision (sync.service.ts, migration 0020).
 * Each part is bounded by half the budget; the least recently used entries go first.
 */
export interface VaultSection {
  revision: number;
  /** The change mark taken before its items were read (revisions.ts, changeMark): a patch reads the items stamped above it. */
  since: number;
  /** Whether SSH key items are in it (they are left out for older clients). */
  withSshKeys: boolean;
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

export interface SyncCache {
  /** Off (a budget of 0): every sync reads and encodes every item in one pass. */
  readonly enabled: boolean;
  items: ItemJsonCache;
  /**
   * The user's last section, whatever its revision: served as it is when its revision is
   * `revision` (a hit), else patched (a miss).
   */
  get(userId: string, revision: number, withSshKeys: boolean): VaultSection | undefined;
  set(userId: string, section: VaultSection): void;
}

/** Bytes of bookkeeping per item of a patchable section (its id, its place in a page's index), roughly. */
const ITEM_OVERHEAD = 100;

/** `onLookup` hears whether each section lookup found the revision asked for (the metrics' hit rate). */
export function createSyncCache(maxBytes: number, onLookup: (hit: boolean) => void = () => undefined): SyncCache {
  const sectionBytes = (s: VaultSection) =>
    s.folders.length + s.items.chunks().reduce((sum, chunk) => sum + chunk.length, 0) + s.items.count * ITEM_OVERHEAD;
  const entries = createByteLru<VaultSection>(Math.floor(maxBytes / 2), sectionBytes);
  const keyOf = (userId: string, withSshKeys: boolean) => `${userId}:${withSshKeys ? 1 : 0}`;
  return {
    enabled: maxBytes > 0,
    items: createItemJsonCache(Math.floor(maxBytes / 2)),
    get(userId, revision, withSshKeys) {
      const entry = entries.get(keyOf(userId, withSshKeys));
      onLookup(entry?.revision === revision);
      return entry;
    },
    set(userId, section) {
      entries.set(keyOf(userId, section.withSshKeys), section);
    },
  };
}
