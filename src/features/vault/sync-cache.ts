import { createByteLru } from '../../shared/byte-lru.js';
import { createItemJsonCache, type ItemJsonCache } from './item-json-cache.js';

/**
 * What sync keeps between answers, in two parts sharing one byte budget:
 * - `items`: each item's encoded shared part under its id and version (item-json-cache.ts), so
 *   that after a change only the changed items are read and encoded again;
 * - the vault sections (folders and the items' JSON) per user while their vault revision
 *   (see revisions.ts) is unchanged, for vaults without organization collections: clients sync
 *   on login, on unlock and on every device after each change, and all but the first of those
 *   find the same revision and skip even listing the items. The revision is read from the
 *   database on every sync, so a section is never served after a change made by any instance.
 * Each part is bounded by half the budget; the least recently used entries go first.
 */
export interface VaultSection {
  revision: number;
  /** Whether SSH key items are in it (they are left out for older clients). */
  withSshKeys: boolean;
  folders: string;
  /** The items array as JSON bytes, in chunks (see encodeItems). */
  ciphers: readonly Buffer[];
}

export interface SyncCache {
  /** Off (a budget of 0): every sync reads and encodes every item in one pass. */
  readonly enabled: boolean;
  items: ItemJsonCache;
  get(userId: string, revision: number, withSshKeys: boolean): VaultSection | undefined;
  set(userId: string, section: VaultSection): void;
}

/** `onLookup` hears whether each section lookup found the revision asked for (the metrics' hit rate). */
export function createSyncCache(maxBytes: number, onLookup: (hit: boolean) => void = () => undefined): SyncCache {
  const sectionBytes = (s: VaultSection) => s.folders.length + s.ciphers.reduce((sum, chunk) => sum + chunk.length, 0);
  const entries = createByteLru<VaultSection>(Math.floor(maxBytes / 2), sectionBytes);
  const keyOf = (userId: string, withSshKeys: boolean) => `${userId}:${withSshKeys ? 1 : 0}`;
  return {
    enabled: maxBytes > 0,
    items: createItemJsonCache(Math.floor(maxBytes / 2)),
    get(userId, revision, withSshKeys) {
      const key = keyOf(userId, withSshKeys);
      const entry = entries.get(key);
      if (entry && entry.revision !== revision) entries.delete(key);
      const hit = entry?.revision === revision;
      onLookup(hit);
      return hit ? entry : undefined;
    },
    set(userId, section) {
      entries.set(keyOf(userId, section.withSshKeys), section);
    },
  };
}
