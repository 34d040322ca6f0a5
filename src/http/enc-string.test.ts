import { describe, expect, it } from 'vitest';
import { encryptText, generateSymmetricKey, generateRsaKeyPair, rsaEncryptToEncString } from '../../test/support/bw-crypto.js';
import { isEncString } from './enc-string.js';

const b64 = (n: number) => Buffer.alloc(n, 3).toString('base64');

describe('isEncString', () => {
  it('accepts what the clients write', () => {
    expect(isEncString(encryptText('hello', generateSymmetricKey()))).toBe(true);
    expect(isEncString(rsaEncryptToEncString(Buffer.alloc(64), generateRsaKeyPair().publicKeyB64))).toBe(true);
  });

  it('accepts each type with its own number of parts', () => {
    expect(isEncString(`0.${b64(16)}|${b64(32)}`)).toBe(true);
    expect(isEncString(`1.${b64(16)}|${b64(32)}|${b64(32)}`)).toBe(true);
    expect(isEncString(`3.${b64(256)}`)).toBe(true);
    expect(isEncString(`5.${b64(256)}|${b64(32)}`)).toBe(true);
    expect(isEncString(`6.${b64(256)}|${b64(32)}`)).toBe(true);
    expect(isEncString(`7.${b64(90)}`)).toBe(true);
  });

  it('refuses wrong part counts, unknown types, missing prefixes and non-base64 parts', () => {
    expect(isEncString(`2.${b64(16)}|${b64(32)}`)).toBe(false);
    expect(isEncString(`4.${b64(16)}|${b64(32)}`)).toBe(false);
    expect(isEncString(`8.${b64(16)}`)).toBe(false);
    expect(isEncString(`${b64(16)}|${b64(32)}|${b64(32)}`)).toBe(false);
    expect(isEncString(`2.${b64(16)}||${b64(32)}`)).toBe(false);
    expect(isEncString(`2.${b64(16)}|not base64!|${b64(32)}`)).toBe(false);
    expect(isEncString(`2.${b64(16)}|abc|${b64(32)}`)).toBe(false);
    expect(isEncString('')).toBe(false);
    expect(isEncString('2.')).toBe(false);
    expect(isEncString('hello')).toBe(false);
  });
});
