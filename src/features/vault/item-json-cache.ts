import { createByteLru } from '../../shared/byte-lru.js';

/**
 * Each item's shared part as encoded JSON (cipherSharedJson: content, key, dates,
 * attachments), kept under the item's id and version. The version moves with every update of
 * the item's row, by a trigger in the database (migration 0019), so an entry whose version
 * still matches the one a sync just listed is exactly what encoding the row again would give,
 * whichever instance made the last change. One entry serves every member who sees the item;
 * each user's folder, favorite, archive and rights are added per sync (cipherUserJson).
 * Bounded by bytes; the least recently used entries go first.
 */
export interface ItemJsonCache {
  get(id: string, version: number): string | undefined;
  set(id: string, version: number, json: string): void;
}

/** Bytes of bookkeeping per entry besides the JSON text (key, map slot, object), roughly. */
const ENTRY_OVERHEAD = 120;

export function createItemJsonCache(maxBytes: number): ItemJsonCache {
  const entries = createByteLru<{ version: number; json: string }>(maxBytes, (e) => e.json.length + ENTRY_OVERHEAD);
  return {
    get(id, version) {
      const entry = entries.get(id);
      return entry?.version === version ? entry.json : undefined;
    },
    set(id, version, json) {
      entries.set(id, { version, json });
    },
  };
}
