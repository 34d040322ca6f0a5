import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { isGuid } from './ids.js';

describe('isGuid', () => {
  it('accepts a GUID in any letter case and nothing else', () => {
    const id = randomUUID();
    expect(isGuid(id)).toBe(true);
    expect(isGuid(id.toUpperCase())).toBe(true);
    for (const bad of ['', 'foo', '-'.repeat(36), `${id}x`, ` ${id}`, id.replace(/-/g, ''), `apikey.${id}`]) expect(isGuid(bad), bad).toBe(false);
  });
});
