import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSecretBox } from './secret-box.js';

describe('secret box', () => {
  const box = createSecretBox(randomBytes(32));

  it('opens what it sealed, and the sealed text does not hold the secret', () => {
    const sealed = box.seal('client-secret-123', 'sso:org-1');
    expect(sealed).not.toContain('client-secret');
    expect(box.open(sealed, 'sso:org-1')).toBe('client-secret-123');
  });

  it('refuses another purpose, another key, and altered text', () => {
    const sealed = box.seal('s', 'sso:org-1');
    expect(() => box.open(sealed, 'sso:org-2')).toThrow();
    expect(() => createSecretBox(randomBytes(32)).open(sealed, 'sso:org-1')).toThrow();
    const parts = sealed.split('.');
    parts[2] = Buffer.from('x').toString('base64url');
    expect(() => box.open(parts.join('.'), 'sso:org-1')).toThrow();
    expect(() => box.open('plain', 'sso:org-1')).toThrow();
  });

  it('refuses a tag cut short, which GCM would otherwise still check as a prefix', () => {
    const sealed = box.seal('s', 'sso:org-1');
    const parts = sealed.split('.');
    parts[3] = Buffer.from(parts[3]!, 'base64url').subarray(0, 4).toString('base64url');
    expect(() => box.open(parts.join('.'), 'sso:org-1')).toThrow();
  });

  it('reads a key given as a function only when first used', () => {
    let reads = 0;
    const key = randomBytes(32);
    const lazy = createSecretBox(() => (reads++, key));
    expect(reads).toBe(0);
    expect(createSecretBox(key).open(lazy.seal('x', 'p'), 'p')).toBe('x');
    lazy.seal('y', 'p');
    expect(reads).toBe(1);
  });

  it('wants a 32-byte key', () => {
    expect(() => createSecretBox(randomBytes(16))).toThrow(/32 bytes/);
  });
});
