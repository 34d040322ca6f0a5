import { createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { Buffer } from 'node:buffer';
import { describe, it, expect } from 'vitest';
import {
  decryptEncString,
  decryptText,
  deriveMasterKey,
  encryptText,
  encryptToEncString,
  generateRsaKeyPair,
  generateSymmetricKey,
  keyId,
  makeTestAccount,
  masterPasswordHash,
  registerFinishBody,
  rsaDecryptEncString,
  rsaEncryptToEncString,
  smAccessTokenKey,
  stretchMasterKey,
  symmetricKeyFrom,
  type KdfSettings,
} from './bw-crypto.js';

/** Replaces one base64 part of a type-2 EncString with the same bytes, one bit flipped. */
function flipBitInPart(enc: string, partIndex: number): string {
  const parts = enc.slice(2).split('|');
  const bytes = Buffer.from(parts[partIndex] ?? '', 'base64');
  bytes[0] = (bytes[0] ?? 0) ^ 0x01;
  parts[partIndex] = bytes.toString('base64');
  return `2.${parts.join('|')}`;
}

describe('master key and master password hash', () => {
  it('matches the hash the official CLI sends for user@example.com / password / 600000', () => {
    const masterKey = deriveMasterKey('password', 'user@example.com', 600000);
    expect(masterPasswordHash(masterKey, 'password')).toBe('jGBy+VPABMY3y+PdVgY7jClsyQhHeGRwvYFS+l6jfH8=');
  });

  it('salts with the trimmed, lower-cased email', () => {
    expect(deriveMasterKey('pw', '  User@Example.COM ', 5000)).toEqual(deriveMasterKey('pw', 'user@example.com', 5000));
  });

  it('gives a different (local authorization) hash with 2 iterations', () => {
    const masterKey = deriveMasterKey('pw', 'a@b.c', 5000);
    expect(masterPasswordHash(masterKey, 'pw', 2)).not.toBe(masterPasswordHash(masterKey, 'pw'));
  });
});

describe('stretchMasterKey', () => {
  it('uses HKDF-Expand only, with the master key as the PRK', () => {
    // node's hkdfSync runs Extract then Expand, so feeding it the IKM/salt
    // whose Extract output is our PRK must give the same keys.
    const ikm = randomBytes(32);
    const salt = randomBytes(32);
    const prk = createHmac('sha256', salt).update(ikm).digest();
    const stretched = stretchMasterKey(prk);
    expect(stretched.encKey).toEqual(Buffer.from(hkdfSync('sha256', ikm, salt, 'enc', 32)));
    expect(stretched.macKey).toEqual(Buffer.from(hkdfSync('sha256', ikm, salt, 'mac', 32)));
    expect(stretched.raw).toEqual(Buffer.concat([stretched.encKey, stretched.macKey]));
  });
});

describe('symmetric keys', () => {
  it('splits a 64-byte key into AES and HMAC halves', () => {
    const raw = randomBytes(64);
    const key = symmetricKeyFrom(raw);
    expect(key.encKey).toEqual(raw.subarray(0, 32));
    expect(key.macKey).toEqual(raw.subarray(32));
    expect(key.raw).toEqual(raw);
  });

  it('rejects keys that are not 64 bytes', () => {
    expect(() => symmetricKeyFrom(randomBytes(32))).toThrow(/64 bytes/);
  });
});

describe('type 2 EncString', () => {
  it('round-trips text and binary data in the 2.iv|ct|mac format', () => {
    const key = generateSymmetricKey();
    const enc = encryptText('héllo wörld 🔐', key);
    expect(enc).toMatch(/^2\.[A-Za-z0-9+/]{22}==\|[A-Za-z0-9+/=]+\|[A-Za-z0-9+/]{43}=$/);
    expect(decryptText(enc, key)).toBe('héllo wörld 🔐');

    const data = randomBytes(100);
    expect(decryptEncString(encryptToEncString(data, key), key)).toEqual(data);
    expect(decryptEncString(encryptToEncString('', key), key)).toEqual(Buffer.alloc(0));
  });

  it('uses a fresh IV for every encryption', () => {
    const key = generateSymmetricKey();
    expect(encryptText('same', key)).not.toBe(encryptText('same', key));
  });

  it('rejects a tampered MAC', () => {
    const key = generateSymmetricKey();
    const tampered = flipBitInPart(encryptText('secret', key), 2);
    expect(() => decryptEncString(tampered, key)).toThrow(/MAC mismatch/);
  });

  it('rejects a tampered ciphertext or IV', () => {
    const key = generateSymmetricKey();
    const enc = encryptText('secret', key);
    expect(() => decryptEncString(flipBitInPart(enc, 1), key)).toThrow(/MAC mismatch/);
    expect(() => decryptEncString(flipBitInPart(enc, 0), key)).toThrow(/MAC mismatch/);
  });

  it('rejects decryption with the wrong key', () => {
    const enc = encryptText('secret', generateSymmetricKey());
    expect(() => decryptEncString(enc, generateSymmetricKey())).toThrow(/MAC mismatch/);
  });

  it('rejects malformed EncStrings', () => {
    const key = generateSymmetricKey();
    const enc = encryptText('secret', key);
    expect(() => decryptEncString(enc.slice(2), key)).toThrow(Error);
    expect(() => decryptEncString(`0.${enc.slice(2)}`, key)).toThrow(/type/);
    expect(() => decryptEncString(enc.split('|').slice(0, 2).join('|'), key)).toThrow(/3 parts/);
    expect(() => decryptEncString(enc.replace('|', '|!'), key)).toThrow(/base64/);
  });
});

describe('RSA and type 4 EncString', () => {
  it('round-trips a 64-byte org key through RSA-OAEP-SHA1', () => {
    const { publicKeyB64, privateKeyDer } = generateRsaKeyPair();
    const orgKey = generateSymmetricKey().raw;
    const enc = rsaEncryptToEncString(orgKey, publicKeyB64);
    expect(enc).toMatch(/^4\.[A-Za-z0-9+/]+={0,2}$/);
    // A 2048-bit modulus gives a 256-byte ciphertext.
    expect(Buffer.from(enc.slice(2), 'base64')).toHaveLength(256);
    expect(rsaDecryptEncString(enc, privateKeyDer)).toEqual(orgKey);
  });

  it('refuses to decrypt with another private key', () => {
    const alice = generateRsaKeyPair();
    const bob = generateRsaKeyPair();
    const enc = rsaEncryptToEncString(randomBytes(64), alice.publicKeyB64);
    expect(() => rsaDecryptEncString(enc, bob.privateKeyDer)).toThrow(Error);
  });

  it('rejects non-type-4 EncStrings', () => {
    const { privateKeyDer } = generateRsaKeyPair();
    expect(() => rsaDecryptEncString('3.AAAA', privateKeyDer)).toThrow(/type 4/);
  });
});

describe('keyId', () => {
  it('is 32 lowercase hex chars, stable for a key and distinct between keys', () => {
    const key = generateSymmetricKey();
    const id = keyId(key);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(keyId(symmetricKeyFrom(Buffer.from(key.raw)))).toBe(id);
    expect(keyId(generateSymmetricKey())).not.toBe(id);
  });
});

describe('makeTestAccount', () => {
  it('wraps the user key with the stretched master key', () => {
    const account = makeTestAccount({ email: 'Alice@Example.com' });
    const stretched = stretchMasterKey(deriveMasterKey(account.password, account.email, account.iterations));
    expect(decryptEncString(account.encryptedUserKey, stretched)).toEqual(account.userKey.raw);
  });

  it('wraps the private key with the user key and derives consistent values', () => {
    const account = makeTestAccount({ email: 'bob@example.com', password: 'pw', name: 'Bob', iterations: 6000 });
    expect(account).toMatchObject({ email: 'bob@example.com', password: 'pw', name: 'Bob', iterations: 6000 });
    expect(decryptEncString(account.encryptedPrivateKey, account.userKey)).toEqual(account.privateKeyDer);
    expect(account.masterKey).toEqual(deriveMasterKey('pw', 'bob@example.com', 6000));
    expect(account.masterPasswordHash).toBe(masterPasswordHash(account.masterKey, 'pw'));
    expect(account.userKeyId).toBe(keyId(account.userKey));
    const probe = randomBytes(64);
    expect(rsaDecryptEncString(rsaEncryptToEncString(probe, account.publicKeyB64), account.privateKeyDer)).toEqual(probe);
  });

  it('defaults to the test password and 600000 PBKDF2 iterations', () => {
    const account = makeTestAccount({ email: 'carol@example.com' });
    expect(account.password).toBe('correct horse battery staple');
    expect(account.iterations).toBe(600_000);
  });

  it('accepts PBKDF2 kdf settings', () => {
    const account = makeTestAccount({ email: 'dave@example.com', kdf: { kdfType: 0, iterations: 7000 } });
    expect(account.iterations).toBe(7000);
  });

  it('rejects Argon2id kdf settings with a clear error', () => {
    const kdf: KdfSettings = { kdfType: 1, iterations: 3, memory: 64, parallelism: 4 };
    expect(() => makeTestAccount({ email: 'erin@example.com', kdf })).toThrow(/Argon2id/);
  });
});

describe('registerFinishBody', () => {
  it('contains both the flat and the masterPassword* shapes with a lower-cased salt', () => {
    const account = makeTestAccount({ email: 'Frank@Example.COM', name: 'Frank' });
    const body = registerFinishBody(account);
    const kdf = { kdfType: 0, iterations: 600_000, memory: null, parallelism: null };
    expect(body).toEqual({
      email: 'Frank@Example.COM',
      name: 'Frank',
      masterPasswordHash: account.masterPasswordHash,
      masterPasswordHint: null,
      userSymmetricKey: account.encryptedUserKey,
      userAsymmetricKeys: { publicKey: account.publicKeyB64, encryptedPrivateKey: account.encryptedPrivateKey },
      kdf: 0,
      kdfIterations: 600_000,
      kdfMemory: null,
      kdfParallelism: null,
      masterPasswordAuthentication: {
        salt: 'frank@example.com',
        kdf,
        masterPasswordAuthenticationHash: account.masterPasswordHash,
      },
      masterPasswordUnlock: { salt: 'frank@example.com', kdf, masterKeyWrappedUserKey: account.encryptedUserKey },
    });
    // Survives a JSON round trip unchanged, i.e. it is a plain JSON body.
    expect(JSON.parse(JSON.stringify(body))).toEqual(body);
  });

  it('merges extra fields over the defaults', () => {
    const account = makeTestAccount({ email: 'grace@example.com' });
    const body = registerFinishBody(account, { masterPasswordHint: 'hint', emailVerificationToken: 'tok' });
    expect(body.masterPasswordHint).toBe('hint');
    expect(body.emailVerificationToken).toBe('tok');
    expect(body.userSymmetricKey).toBe(account.encryptedUserKey);
  });
});

describe('smAccessTokenKey', () => {
  it('equals HKDF-SHA256 with salt "bitwarden-accesstoken" (Extract is that HMAC) and info "sm-access-token", split enc then mac', () => {
    const secret = Buffer.from('000102030405060708090a0b0c0d0e0f', 'hex');
    const expected = Buffer.from(hkdfSync('sha256', secret, 'bitwarden-accesstoken', 'sm-access-token', 64));
    const key = smAccessTokenKey(secret);
    expect(key.raw).toEqual(expected);
    expect(key.encKey).toEqual(expected.subarray(0, 32));
    expect(key.macKey).toEqual(expected.subarray(32));
  });

  it('uses the HMAC of the secret keyed by the label as the pseudo-random key', () => {
    const secret = randomBytes(16);
    const prk = createHmac('sha256', 'bitwarden-accesstoken').update(secret).digest();
    const first = createHmac('sha256', prk).update('sm-access-token').update(Buffer.from([1])).digest();
    expect(smAccessTokenKey(secret).encKey).toEqual(first);
  });

  it('refuses a secret that is not 16 bytes', () => {
    expect(() => smAccessTokenKey(randomBytes(15))).toThrow(/16 bytes/);
  });
});
