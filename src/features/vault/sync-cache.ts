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

export function createSyncCache(maxBytes: number): SyncCache {
  const entries = new Map<string, VaultSection>();
  let bytes = 0;
  const size = (s: VaultSection) => s.ciphers.length + s.folders.length;
  const remove = (key: string) => {
    const old = entries.get(key);
    if (old) {
      bytes -= size(old);
      entries.delete(key);
    }
  };

  return {
    get(userId, revision, withSshKeys) {
      const key = `${userId}:${withSshKeys ? 1 : 0}`;
      const entry = entries.get(key);
      if (!entry) return undefined;
      if (entry.revision !== revision) {
        remove(key);
        return undefined;
      }
      // Map order is insertion order: re-inserting marks the entry as most recently used.
      entries.delete(key);
      entries.set(key, entry);
      return entry;
    },
    set(userId, section) {
      if (size(section) > maxBytes) return;
      const key = `${userId}:${section.withSshKeys ? 1 : 0}`;
      remove(key);
      entries.set(key, section);
      bytes += size(section);
      for (const oldest of entries.keys()) {
        if (bytes <= maxBytes) break;
        remove(oldest);
      }
    },
  };
}
