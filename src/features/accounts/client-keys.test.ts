import { createPrivateKey, createPublicKey } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decryptEncString,
  deriveMasterKey as testDeriveMasterKey,
  masterPasswordHash as testMasterPasswordHash,
  stretchMasterKey as testStretchMasterKey,
  symmetricKeyFrom,
} from '../../../test/support/bw-crypto.js';
import { createClientAccountKeys, deriveMasterKey, UnsupportedKdf } from './client-keys.js';
import { KdfType } from './kdf.js';

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

  it('refuses Argon2id rather than deriving something else', async () => {
    await expect(deriveMasterKey('password', 'a@example.com', { kdf: KdfType.Argon2id, iterations: 3, memory: 64, parallelism: 4 })).rejects.toThrow(
      UnsupportedKdf,
    );
  });
});
