import { createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decryptEncString,
  deriveMasterKey as testDeriveMasterKey,
  masterPasswordHash as testMasterPasswordHash,
  stretchMasterKey as testStretchMasterKey,
  symmetricKeyFrom,
} from '../../../test/support/bw-crypto.js';
import { createClientAccountKeys, deriveMasterKey } from './client-keys.js';
import { KdfType } from '../../platform/auth/kdf.js';

/**
 * The command's client-side crypto, checked against the tests' own implementation
 * (test/support/bw-crypto.ts, which the official CLI accepted) and a value the CLI sent.
 */
describe('client keys for operator-created accounts', () => {
  const pbkdf2 = (iterations: number) => ({ kdf: KdfType.PBKDF2_SHA256, iterations, memory: null, parallelism: null });

  it('derives the master password hash the official CLI sends', async () => {
    // official-clients.md §10.2: user@example.com / password / 600,000 iterations, as the CLI sent it.
    const keys = await createClientAccountKeys(' User@Example.com ', 'password', pbkdf2(600_000));
    expect(keys.masterPasswordHash).toBe('jGBy+VPABMY3y+PdVgY7jClsyQhHeGRwvYFS+l6jfH8=');
  });

  it('wraps a 64-byte user key under the stretched master key, and the private key under the user key', async () => {
    const email = 'keys@example.com';
    const password = 'a master password for keys';
    const keys = await createClientAccountKeys(email, password, pbkdf2(1000));
    const masterKey = testDeriveMasterKey(password, email, 1000);
    expect(keys.masterPasswordHash).toBe(testMasterPasswordHash(masterKey, password));

    const userKey = decryptEncString(keys.masterKeyWrappedUserKey, testStretchMasterKey(masterKey));
    expect(userKey).toHaveLength(64);
    const privateDer = decryptEncString(keys.encryptedPrivateKey, symmetricKeyFrom(userKey));
    const privateKey = createPrivateKey({ key: privateDer, format: 'der', type: 'pkcs8' });
    expect(privateKey.asymmetricKeyDetails).toMatchObject({ modulusLength: 2048, publicExponent: 65537n });
    const fromPrivate = createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
    expect(keys.publicKey).toBe(fromPrivate);
  });

  it('makes a new user key and key pair every time', async () => {
    const a = await createClientAccountKeys('same@example.com', 'the same password', pbkdf2(1000));
    const b = await createClientAccountKeys('same@example.com', 'the same password', pbkdf2(1000));
    expect(a.masterPasswordHash).toBe(b.masterPasswordHash);
    expect(a.publicKey).not.toBe(b.publicKey);
    expect(a.masterKeyWrappedUserKey).not.toBe(b.masterKeyWrappedUserKey);
  });

  // Known answers from the official SDK's own tests (bitwarden-crypto, master key derivation).
  it('derives the master key the official SDK derives, with PBKDF2 and with Argon2id', async () => {
    expect([...(await deriveMasterKey('67t9b5g67$%Dh89n', 'test_key', pbkdf2(10_000)))]).toEqual([
      31, 79, 104, 226, 150, 71, 177, 90, 194, 80, 172, 209, 17, 129, 132, 81, 138, 167, 69, 167, 254, 149, 2, 27, 39, 197, 64, 42, 22, 195, 86, 75,
    ]);
    const argon2 = { kdf: KdfType.Argon2id, iterations: 4, memory: 32, parallelism: 2 };
    expect([...(await deriveMasterKey('67t9b5g67$%Dh89n', 'test_key', argon2))]).toEqual([
      207, 240, 225, 177, 162, 19, 163, 76, 98, 106, 179, 175, 224, 9, 17, 240, 20, 147, 237, 47, 246, 150, 141, 184, 62, 225, 131, 242, 51, 53, 225, 242,
    ]);
  });
});
