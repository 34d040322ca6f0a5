import { createHash } from 'node:crypto';
import { argon2id } from 'hash-wasm';
import { deriveMasterKey, encryptToEncString, kdfSalt, masterPasswordHash, stretchMasterKey, type SymmetricKey } from './bw-crypto.js';

/** KDF settings as the 2026 clients send them (KdfRequestModel). */
export type KdfBody =
  | { kdfType: 0; iterations: number; memory?: null; parallelism?: null }
  | { kdfType: 1; iterations: number; memory: number; parallelism: number };

/**
 * The master key as the clients derive it with either KDF: PBKDF2-SHA256 over the salt, or
 * Argon2id over the SHA-256 of the salt with the memory given in MiB.
 */
export async function deriveMasterKeyWith(password: string, email: string, kdf: KdfBody): Promise<Buffer> {
  if (kdf.kdfType === 0) return deriveMasterKey(password, email, kdf.iterations);
  const salt = createHash('sha256').update(kdfSalt(email)).digest();
  const hash = await argon2id({
    password,
    salt,
    iterations: kdf.iterations,
    memorySize: kdf.memory * 1024,
    parallelism: kdf.parallelism,
    hashLength: 32,
    outputType: 'binary',
  });
  return Buffer.from(hash);
}

/** A new master password (or new KDF) for an account: the objects the 2026 clients send and the hash they log in with. */
export interface NewMasterPassword {
  masterPasswordHash: string;
  wrappedUserKey: string;
  authenticationData: { salt: string; kdf: KdfBody; masterPasswordAuthenticationHash: string };
  unlockData: { salt: string; kdf: KdfBody; masterKeyWrappedUserKey: string };
}

/** What a client sends to set `password` with `kdf`, keeping the account's user key. */
export async function newMasterPassword(email: string, password: string, kdf: KdfBody, userKey: SymmetricKey): Promise<NewMasterPassword> {
  const masterKey = await deriveMasterKeyWith(password, email, kdf);
  const hash = masterPasswordHash(masterKey, password);
  const wrappedUserKey = encryptToEncString(userKey.raw, stretchMasterKey(masterKey));
  const salt = kdfSalt(email);
  return {
    masterPasswordHash: hash,
    wrappedUserKey,
    authenticationData: { salt, kdf, masterPasswordAuthenticationHash: hash },
    unlockData: { salt, kdf, masterKeyWrappedUserKey: wrappedUserKey },
  };
}
