/**
 * A least-recently-used map bounded by the bytes of its values, for caches of encoded answers
 * (see vault/sync-cache.ts, secrets-manager/sm-answers.ts). A value larger than the whole
 * budget is not kept; a budget of 0 keeps nothing.
 */
export interface ByteLru<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
  /**
   * Drops the entries that no get or set has used since the previous call, and returns the bytes
   * they held. Called at an interval, it gives back what the cache holds for nobody
   * (cache-release.ts).
   */
  dropUnused(): number;
}

interface Entry<V> {
  value: V;
  /** sizeOf(value) when it was set: what the entry takes from the budget until it goes. */
  size: number;
  /** The dropUnused round in which a get or set last used it. */
  round: number;
}

export function createByteLru<V>(maxBytes: number, sizeOf: (value: V) => number): ByteLru<V> {
  const entries = new Map<string, Entry<V>>();
  let bytes = 0;
  let round = 0;
  const remove = (key: string) => {
    const old = entries.get(key);
    if (old !== undefined) {
      bytes -= old.size;
      entries.delete(key);
    }
  };

  return {
    get(key) {
      const entry = entries.get(key);
      if (entry === undefined) return undefined;
      // Map order is insertion order: re-inserting marks the entry as most recently used.
      entries.delete(key);
      entry.round = round;
      entries.set(key, entry);
      return entry.value;
    },
    set(key, value) {
      remove(key);
      const size = sizeOf(value);
      if (size > maxBytes) return;
      entries.set(key, { value, size, round });
      bytes += size;
      for (const oldest of entries.keys()) {
        if (bytes <= maxBytes) break;
        remove(oldest);
      }
    },
    delete: remove,
    dropUnused() {
      // Least recently used first: the entries used this round are all behind the first one found.
      let dropped = 0;
      for (const [key, entry] of entries) {
        if (entry.round === round) break;
        dropped += entry.size;
        remove(key);
      }
      round++;
      return dropped;
    },
  };
}
