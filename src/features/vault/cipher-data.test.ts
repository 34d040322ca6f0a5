import { describe, expect, it } from 'vitest';
import { generateSymmetricKey } from '../../../test/support/bw-crypto.js';
import { cipherBody } from '../../../test/support/vault.js';
import { BadRequest } from '../../http/errors.js';
import { serializeCipherData, toCipherData } from './cipher-data.js';
import type { CipherRequest } from './ciphers.schemas.js';

const key = generateSymmetricKey();

describe('toCipherData', () => {
  it('keeps only the sub-object of the item’s type, with every known key, in response order', () => {
    const request = cipherBody('card', key, { login: { username: 'ignored' }, identity: { title: 'ignored' } }) as CipherRequest;
    const data = toCipherData(request);
    expect(Object.keys(data)).toEqual(['name', 'notes', 'login', 'card', 'identity', 'secureNote', 'sshKey', 'bankAccount', 'driversLicense', 'passport', 'fields', 'passwordHistory']);
    expect(data.login).toBeNull();
    expect(data.identity).toBeNull();
    expect(Object.keys(data.card ?? {})).toEqual(['cardholderName', 'brand', 'number', 'expMonth', 'expYear', 'code']);
  });

  it('drops what the clients send beside the model (response: null, unknown keys)', () => {
    const request = cipherBody('login', key) as CipherRequest & { login: { uris: Record<string, unknown>[] } };
    request.login.uris[0] = { ...request.login.uris[0], response: null, extra: 'x' };
    const data = toCipherData(request);
    const uris = (data.login?.uris ?? []) as Record<string, unknown>[];
    expect(Object.keys(uris[0] ?? {})).toEqual(['uri', 'uriChecksum', 'match']);
    expect(serializeCipherData(data)).not.toContain('"response"');
  });

  it('fills absent optional fields with null and a secure note with the generic type', () => {
    const data = toCipherData({ type: 2, name: 'n', secureNote: {} });
    expect(data).toMatchObject({ notes: null, fields: null, passwordHistory: null, secureNote: { type: 0 } });
  });

  it('refuses an item without its type’s sub-object', () => {
    expect(() => toCipherData({ type: 5, name: 'n' })).toThrow(BadRequest);
    expect(() => toCipherData({ type: 8, name: 'n', identity: { passportNumber: null } })).toThrow(BadRequest);
  });

  it('refuses a type it does not know, naming the type, whatever sub-objects come with it', () => {
    const request = { ...cipherBody('card', key), type: 9 } as unknown as CipherRequest;
    expect(() => toCipherData(request)).toThrow(expect.objectContaining({ validationErrors: { type: ['Item type 9 is not supported.'] } }));
  });
});
