import { describe, expect, it } from 'vitest';
import { createSyncCache } from './sync-cache.js';

describe('the sync cache', () => {
  it("drops the organization items' JSON no sync used for a whole release round", () => {
    const cache = createSyncCache(1024 * 1024);
    const json = Buffer.from('{"id":"a"}');
    cache.items.set('a', 1, json);
    cache.items.set('b', 1, json);
    expect(cache.dropUnused()).toBe(0);
    expect(cache.items.get('a', 1)).toBe(json);
    const dropped = cache.dropUnused();
    expect(dropped).toBeGreaterThan(json.length);
    expect(cache.items.get('b', 1)).toBeUndefined();
    expect(cache.items.get('a', 1)).toBe(json);
    expect(cache.dropUnused()).toBe(0);
    expect(cache.dropUnused()).toBe(dropped);
    expect(cache.items.get('a', 1)).toBeUndefined();
  });
});
