import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { distinctIds, isGuid } from './ids.js';

describe('isGuid', () => {
  it('accepts a GUID in any letter case and nothing else', () => {
    const id = randomUUID();
    expect(isGuid(id)).toBe(true);
    expect(isGuid(id.toUpperCase())).toBe(true);
    for (const bad of ['', 'foo', '-'.repeat(36), `${id}x`, ` ${id}`, id.replace(/-/g, ''), `apikey.${id}`]) expect(isGuid(bad), bad).toBe(false);
  });
});

describe('distinctIds', () => {
  it('lower-cases the ids in their order, and refuses one listed twice in any case naming the field and the id', () => {
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    expect(distinctIds([a.toUpperCase(), b, c], 'ids')).toEqual([a, b, c]);
    expect(() => distinctIds([a, b, c, b.toUpperCase(), a], 'ids')).toThrow(expect.objectContaining({ statusCode: 400, message: expect.any(String) }));
    try {
      distinctIds([a, b, c, b.toUpperCase(), a], 'users');
    } catch (error) {
      expect((error as { validationErrors?: unknown }).validationErrors).toEqual({ users: [`The users field lists ${b} more than once.`] });
    }
    expect.assertions(3);
  });
});
