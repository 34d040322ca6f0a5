/**
 * A least-recently-used map bounded by the bytes of its values, for caches of encoded answers
 * (see vault/sync-cache.ts, secrets-manager/sm-answers.ts). A value larger than the whole
 * budget is not kept; a budget of 0 keeps nothing.
 */
export interface ByteLru<V> {
  get(key: string): V | undefined;
  set(key: string, value: V): void;
  delete(key: string): void;
}

export function createByteLru<V>(maxBytes: number, sizeOf: (value: V) => number): ByteLru<V> {
  const entries = new Map<string, V>();
  let bytes = 0;
  const remove = (key: string) => {
    const old = entries.get(key);
    if (old !== undefined) {
      bytes -= sizeOf(old);
      entries.delete(key);
    }
  };

  return {
    get(key) {
      const value = entries.get(key);
      if (value === undefined) return undefined;
      // Map order is insertion order: re-inserting marks the entry as most recently used.
      entries.delete(key);
      entries.set(key, value);
      return value;
    },
    set(key, value) {
      remove(key);
      const size = sizeOf(value);
      if (size > maxBytes) return;
      entries.set(key, value);
      bytes += size;
      for (const oldest of entries.keys()) {
        if (bytes <= maxBytes) break;
        remove(oldest);
      }
    },
    delete: remove,
  };
}
