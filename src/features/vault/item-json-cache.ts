import { createByteLru } from '../../shared/byte-lru.js';
import type { Releasable } from '../../shared/cache-release.js';

/**
 * Each item's JSON in sync up to the user's part (syncItemStart: the opening, then the shared
 * part of cipherSharedJson with the content, key, dates and attachments), as bytes, kept under
 * the item's id and version. The version moves with every update of the item's row (set by
 * the repository's writes, and by the database's triggers for any write that does not:
 * migrations 0019 and 0020), so an entry whose version still matches the one a sync just read
 * is exactly what encoding the row again would give, whichever instance made the last change. One entry serves every member who sees the item; each user's folder,
 * favorite, archive and rights are added per sync (cipherUserJson). Bounded by bytes; the
 * least recently used entries go first.
 */
export interface ItemJsonCache extends Releasable {
  get(id: string, version: number): Buffer | undefined;
  set(id: string, version: number, json: Buffer): void;
}

/** Bytes of bookkeeping per entry besides the JSON bytes (key, map slot, objects), roughly. */
const ENTRY_OVERHEAD = 200;

export function createItemJsonCache(maxBytes: number): ItemJsonCache {
  const entries = createByteLru<{ version: number; json: Buffer }>(maxBytes, (e) => e.json.length + ENTRY_OVERHEAD);
  return {
    get(id, version) {
      const entry = entries.get(id);
      return entry?.version === version ? entry.json : undefined;
    },
    set(id, version, json) {
      entries.set(id, { version, json });
    },
    dropUnused: () => entries.dropUnused(),
  };
}
