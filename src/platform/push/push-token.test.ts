import { describe, expect, it } from 'vitest';
import { usablePushToken } from './push-token.js';

describe('usablePushToken', () => {
  it('takes printable ASCII up to 255 characters, trimmed, and nothing else', () => {
    expect(usablePushToken('  abc:DEF-123_x  ')).toBe('abc:DEF-123_x');
    expect(usablePushToken('a'.repeat(255))).toBe('a'.repeat(255));
    for (const raw of [undefined, null, '', '   ', 'a'.repeat(256), 'tök', 'tok\u0000en', 'x\ud800']) expect(usablePushToken(raw), JSON.stringify(raw)).toBeNull();
  });
});
