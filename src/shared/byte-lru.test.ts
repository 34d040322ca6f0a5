import { describe, expect, it } from 'vitest';
import { createByteLru } from './byte-lru.js';

const lru = (maxBytes: number) => createByteLru<string>(maxBytes, (value) => value.length);

describe('a byte-bounded LRU map', () => {
  it('pushes out the least recently used entries past its budget, and keeps nothing larger than the budget', () => {
    const map = lru(10);
    map.set('a', 'aaaa');
    map.set('b', 'bbbb');
    expect(map.get('a')).toBe('aaaa');
    map.set('c', 'cccc');
    expect(map.get('b')).toBeUndefined();
    expect([map.get('a'), map.get('c')]).toEqual(['aaaa', 'cccc']);
    map.set('d', 'd'.repeat(11));
    expect(map.get('d')).toBeUndefined();
    expect(map.get('a')).toBe('aaaa');
  });

  it('drops the entries no get or set used since its previous round, and counts their bytes', () => {
    const map = lru(100);
    map.set('read', 'r'.repeat(10));
    map.set('written', 'w'.repeat(20));
    map.set('idle', 'i'.repeat(30));
    // Everything was used in this round.
    expect(map.dropUnused()).toBe(0);
    expect(map.get('read')).toBe('r'.repeat(10));
    map.set('written', 'w'.repeat(5));
    expect(map.dropUnused()).toBe(30);
    expect(map.get('idle')).toBeUndefined();
    expect(map.get('written')).toBe('w'.repeat(5));
    // 'read' was not used in the round that just ended; 'written' was read just now.
    expect(map.dropUnused()).toBe(10);
    expect(map.get('read')).toBeUndefined();
    expect(map.get('written')).toBe('w'.repeat(5));
    expect(map.dropUnused()).toBe(0);
    expect(map.dropUnused()).toBe(5);
    expect(map.get('written')).toBeUndefined();
  });

  it('frees the budget of what it dropped', () => {
    const map = lru(10);
    map.set('a', 'a'.repeat(10));
    map.dropUnused();
    map.dropUnused();
    map.set('b', 'b'.repeat(6));
    map.set('c', 'c'.repeat(4));
    expect([map.get('b'), map.get('c')]).toEqual(['b'.repeat(6), 'c'.repeat(4)]);
  });
});
