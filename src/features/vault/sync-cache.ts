import { createByteLru } from '../../shared/byte-lru.js';

/**
 * The vault part of sync answers (folders and items as encoded JSON), kept per user while
 * their vault revision (see revisions.ts) is unchanged. Clients sync on login, on unlock and
 * on every device after each change; all but the first of those find the same revision and
 * skip reading and writing thousands of items. The revision is read from the database on
 * every sync, so an entry is never served after a change made by any instance.
 * Bounded by bytes; the least recently used entries go first.
 */
export interface VaultSection {
  revision: number;
  /** Whether SSH key items are in it (they are left out for older clients). */
  withSshKeys: boolean;
  folders: string;
  ciphers: Buffer;
}

export interface SyncCache {
  get(userId: string, revision: number, withSshKeys: boolean): VaultSection | undefined;
  set(userId: string, section: VaultSection): void;
}

/** `onLookup` hears whether each lookup found the revision asked for (the metrics' hit rate). */
export function createSyncCache(maxBytes: number, onLookup: (hit: boolean) => void = () => undefined): SyncCache {
  const entries = createByteLru<VaultSection>(maxBytes, (s) => s.ciphers.length + s.folders.length);
  const keyOf = (userId: string, withSshKeys: boolean) => `${userId}:${withSshKeys ? 1 : 0}`;
  return {
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
