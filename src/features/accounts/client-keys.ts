import { createCipheriv, createHash, createHmac, generateKeyPair, pbkdf2, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { argon2id } from 'hash-wasm';
import { KdfType, normalizeEmail, type KdfSettings } from '../../platform/auth/kdf.js';

/**
 * What an official client derives and generates when it creates an account, done here for
 * `strongroom users create`, so that the server still only ever receives the master password
 * hash and keys it cannot open (bitwarden-crypto's algorithms, see docs/command-line.md).
 */
export interface ClientAccountKeys {
  /** PBKDF2(masterKey, password, 1): what the client sends as its password. */
  masterPasswordHash: string;
  /** The 64-byte user key, as EncString type 2 under the stretched master key. */
  masterKeyWrappedUserKey: string;
  /** SPKI DER of the RSA-2048 public key, base64. */
  publicKey: string;
  /** PKCS#8 DER of the private key, as EncString type 2 under the user key. */
  encryptedPrivateKey: string;
}

const pbkdf2Async = promisify(pbkdf2);
const generateKeyPairAsync = promisify(generateKeyPair);

/**
 * The master key: PBKDF2-SHA256 over the password, salted with the normalised email; or
 * Argon2id (version 0x13) salted with the SHA-256 of the normalised email, memory in MiB.
 * Node has no Argon2, so it comes from hash-wasm.
 */
export async function deriveMasterKey(password: string, email: string, kdf: KdfSettings): Promise<Buffer> {
  const salt = Buffer.from(normalizeEmail(email), 'utf8');
  if (kdf.kdf === KdfType.PBKDF2_SHA256) return pbkdf2Async(Buffer.from(password, 'utf8'), salt, kdf.iterations, 32, 'sha256');
  if (kdf.memory === null || kdf.parallelism === null) throw new Error('Argon2id needs memory and parallelism.');
  const key = await argon2id({
    password,
    salt: createHash('sha256').update(salt).digest(),
    iterations: kdf.iterations,
    memorySize: kdf.memory * 1024,
    parallelism: kdf.parallelism,
    hashLength: 32,
    outputType: 'binary',
  });
  return Buffer.from(key);
}

export async function masterPasswordHash(masterKey: Buffer, password: string): Promise<string> {
  return (await pbkdf2Async(masterKey, Buffer.from(password, 'utf8'), 1, 32, 'sha256')).toString('base64');
}

/**
 * The stretched master key: HKDF-Expand (no Extract: the master key is the PRK) with infos
 * "enc" and "mac". Each half is 32 bytes, one SHA-256 block, so Expand is a single HMAC of
 * info || 0x01; node's hkdf always runs Extract first and would give other keys.
 */
export function stretchMasterKey(masterKey: Buffer): Buffer {
  const block = (info: string) => createHmac('sha256', masterKey).update(Buffer.from(`${info}\x01`, 'latin1')).digest();
  return Buffer.concat([block('enc'), block('mac')]);
}

/** EncString type 2: AES-256-CBC under the key's first half, HMAC-SHA256 of iv || data under its second. */
export function encryptType2(plain: Buffer, key: Buffer): string {
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', key.subarray(0, 32), iv);
  const data = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', key.subarray(32, 64)).update(iv).update(data).digest();
  return `2.${iv.toString('base64')}|${data.toString('base64')}|${mac.toString('base64')}`;
}

/** Everything an account needs from its client, for this email, password and KDF. */
/**
 * An RSA-2048 key pair as the clients make one, an account's or an organization's: the SPKI
 * public key (base64) and the PKCS#8 private key (DER).
 */
export async function generateRsaKeyPair(): Promise<{ publicKeyB64: string; privateKeyDer: Buffer }> {
  const { publicKey, privateKey } = await generateKeyPairAsync('rsa', {
    modulusLength: 2048,
    publicExponent: 0x10001,
    publicKeyEncoding: { type: 'spki', format: 'der' },
    privateKeyEncoding: { type: 'pkcs8', format: 'der' },
  });
  return { publicKeyB64: publicKey.toString('base64'), privateKeyDer: privateKey };
}

export async function createClientAccountKeys(email: string, password: string, kdf: KdfSettings): Promise<ClientAccountKeys> {
  const masterKey = await deriveMasterKey(password, email, kdf);
  const userKey = randomBytes(64);
  const { publicKeyB64, privateKeyDer } = await generateRsaKeyPair();
  return {
    masterPasswordHash: await masterPasswordHash(masterKey, password),
    masterKeyWrappedUserKey: encryptType2(userKey, stretchMasterKey(masterKey)),
    publicKey: publicKeyB64,
    encryptedPrivateKey: encryptType2(privateKeyDer, userKey),
  };
}
