import { describe, expect, it } from 'vitest';
import { invalidEncStrings, isEncString } from './enc-string.js';

describe('encrypted string shape', () => {
  it('accepts each encryption type with its number of parts', () => {
    expect(isEncString('2.AAECAwQFBgcICQoLDA0ODw==|aGVsbG8=|bWFj')).toBe(true);
    expect(isEncString('0.aXY=|ZGF0YQ==')).toBe(true);
    expect(isEncString('4.cnNhLWRhdGE=')).toBe(true);
    expect(isEncString('6.cnNh|bWFj')).toBe(true);
    expect(isEncString('7.Y29zZQ')).toBe(true);
    expect(isEncString('aXY=|ZGF0YQ==')).toBe(true);
  });

  it('refuses wrong part counts, unknown types and non-base64 parts', () => {
    expect(isEncString('2.aXY=|ZGF0YQ==')).toBe(false);
    expect(isEncString('9.aXY=')).toBe(false);
    expect(isEncString('2.a b|c|d')).toBe(false);
    expect(isEncString('plain text')).toBe(false);
    expect(isEncString('')).toBe(false);
    expect(isEncString('x.aXY=|ZGF0YQ==')).toBe(false);
  });

  it('names the fields that are not encrypted strings', () => {
    expect(invalidEncStrings({ name: '2.aXY=|ZA==|bQ==', notes: 'oops', username: null, password: 5 })).toEqual(['notes', 'password']);
  });
});
