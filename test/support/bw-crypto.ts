/**
 * Client-side Bitwarden crypto for tests: lets server tests build real
 * accounts and encrypted vault data exactly as an official client would,
 * without driving the CLI. Algorithms follow the sdk-internal
 * `bitwarden-crypto` crate as documented in
 * /work/shared/reference/official-clients.md §9–§10; the CLI accepted data
 * produced this way.
 */
import {
  constants,
  createCipheriv,
  createDecipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  type RSAKeyPairOptions,
  pbkdf2Sync,
  privateDecrypt,
  publicEncrypt,
  randomBytes,
  timingSafeEqual,
} from 'node:crypto';
import { Buffer } from 'node:buffer';

export type SymmetricKey = { encKey: Buffer; macKey: Buffer; raw: Buffer };

/** KDF settings as the server stores them; only PBKDF2 can be derived here. */
export type KdfSettings =
  | { kdfType: 0; iterations: number }
  | { kdfType: 1; iterations: number; memory: number; parallelism: number };

const SYMMETRIC_KEY_BYTES = 64;
const HALF_KEY_BYTES = 32;
const IV_BYTES = 16;
const MAC_BYTES = 32;
const AES_BLOCK_BYTES = 16;
const SHA256_BYTES = 32;

/**
 * Strict base64, because Buffer.from(…, 'base64') silently skips junk and
 * a test helper that accepts malformed EncStrings would hide server bugs.
 */
function decodeBase64(text: string, what: string): Buffer {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) {
    throw new Error(`EncString ${what} is not valid base64`);
  }
  return Buffer.from(text, 'base64');
}

function assertPositiveInteger(value: number, what: string): void {
  if (!Number.isSafeInteger(value) || value < 1) {
    throw new Error(`${what} must be a positive integer, got ${String(value)}`);
  }
}

/** The KDF salt is the normalised email today (§10.1); vaultwarden rejects anything else. */
export function kdfSalt(email: string): string {
  return email.trim().toLowerCase();
}

export function symmetricKeyFrom(raw64: Buffer): SymmetricKey {
  if (raw64.length !== SYMMETRIC_KEY_BYTES) {
    throw new Error(`symmetric key must be ${SYMMETRIC_KEY_BYTES} bytes, got ${raw64.length}`);
  }
  // Copies keep callers' later mutation of their buffer from changing our key.
  const raw = Buffer.from(raw64);
  return {
    encKey: Buffer.from(raw.subarray(0, HALF_KEY_BYTES)),
    macKey: Buffer.from(raw.subarray(HALF_KEY_BYTES)),
    raw,
  };
}

export function generateSymmetricKey(): SymmetricKey {
  return symmetricKeyFrom(randomBytes(SYMMETRIC_KEY_BYTES));
}

/** KDF type 0 (PBKDF2-SHA256) only; Argon2id needs a package Node 20 lacks. */
export function deriveMasterKey(password: string, email: string, iterations: number): Buffer {
  assertPositiveInteger(iterations, 'KDF iterations');
  return pbkdf2Sync(Buffer.from(password, 'utf8'), Buffer.from(kdfSalt(email), 'utf8'), iterations, 32, 'sha256');
}

/** iterations 1 = ServerAuthorization hash (what the server sees); 2 = LocalAuthorization. */
export function masterPasswordHash(masterKey: Buffer, password: string, iterations = 1): string {
  assertPositiveInteger(iterations, 'hash iterations');
  return pbkdf2Sync(masterKey, Buffer.from(password, 'utf8'), iterations, 32, 'sha256').toString('base64');
}

/**
 * RFC 5869 Expand alone: Bitwarden uses the master key directly as the PRK,
 * so node's hkdf (which always runs Extract first) yields different keys.
 */
function hkdfExpandSha256(prk: Buffer, info: string, length: number): Buffer {
  if (length > 255 * SHA256_BYTES) {
    throw new Error('HKDF-Expand output too long');
  }
  const infoBytes = Buffer.from(info, 'utf8');
  const blocks: Buffer[] = [];
  let previous = Buffer.alloc(0);
  for (let counter = 1; blocks.length * SHA256_BYTES < length; counter++) {
    previous = createHmac('sha256', prk)
      .update(previous)
      .update(infoBytes)
      .update(Buffer.from([counter]))
      .digest();
    blocks.push(previous);
  }
  return Buffer.concat(blocks).subarray(0, length);
}

export function stretchMasterKey(masterKey: Buffer): SymmetricKey {
  const encKey = hkdfExpandSha256(masterKey, 'enc', HALF_KEY_BYTES);
  const macKey = hkdfExpandSha256(masterKey, 'mac', HALF_KEY_BYTES);
  return symmetricKeyFrom(Buffer.concat([encKey, macKey]));
}

/**
 * The key a Secrets Manager access token carries after its `:`: Bitwarden's shareable-key
 * derivation of the 16-byte secret, HMAC-SHA256 keyed "bitwarden-accesstoken" as the PRK, then
 * HKDF-Expand with info "sm-access-token" to 64 bytes (encryption half, then MAC half), as the
 * web app and the SDK derive it (official-clients.md §8.3).
 */
export function smAccessTokenKey(secret16: Buffer): SymmetricKey {
  if (secret16.length !== 16) throw new Error(`access token secret must be 16 bytes, got ${secret16.length}`);
  const prk = createHmac('sha256', 'bitwarden-accesstoken').update(secret16).digest();
  return symmetricKeyFrom(hkdfExpandSha256(prk, 'sm-access-token', SYMMETRIC_KEY_BYTES));
}

function computeMac(key: SymmetricKey, iv: Buffer, ciphertext: Buffer): Buffer {
  return createHmac('sha256', key.macKey).update(iv).update(ciphertext).digest();
}

/** EncString type 2 (AesCbc256_HmacSha256_B64), the only type clients write for vault data. */
export function encryptToEncString(plain: Buffer | string, key: SymmetricKey): string {
  const data = typeof plain === 'string' ? Buffer.from(plain, 'utf8') : plain;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-cbc', key.encKey, iv);
  const ciphertext = Buffer.concat([cipher.update(data), cipher.final()]);
  const mac = computeMac(key, iv, ciphertext);
  return `2.${iv.toString('base64')}|${ciphertext.toString('base64')}|${mac.toString('base64')}`;
}

export function decryptEncString(enc: string, key: SymmetricKey): Buffer {
  const dot = enc.indexOf('.');
  if (dot < 0) {
    throw new Error('EncString has no type prefix');
  }
  const type = enc.slice(0, dot);
  if (type !== '2') {
    throw new Error(`unsupported EncString type ${JSON.stringify(type)}; only type 2 is symmetric-decryptable here`);
  }
  const parts = enc.slice(dot + 1).split('|');
  if (parts.length !== 3) {
    throw new Error(`type 2 EncString needs 3 parts, got ${parts.length}`);
  }
  const [ivB64, ctB64, macB64] = parts as [string, string, string];
  const iv = decodeBase64(ivB64, 'IV');
  const ciphertext = decodeBase64(ctB64, 'ciphertext');
  const mac = decodeBase64(macB64, 'MAC');
  if (iv.length !== IV_BYTES) {
    throw new Error(`EncString IV must be ${IV_BYTES} bytes, got ${iv.length}`);
  }
  if (mac.length !== MAC_BYTES) {
    throw new Error(`EncString MAC must be ${MAC_BYTES} bytes, got ${mac.length}`);
  }
  // Encrypt-then-MAC: authenticate before touching the padding, so a
  // tampered ciphertext can never act as a padding oracle.
  if (!timingSafeEqual(computeMac(key, iv, ciphertext), mac)) {
    throw new Error('EncString MAC mismatch');
  }
  if (ciphertext.length === 0 || ciphertext.length % AES_BLOCK_BYTES !== 0) {
    throw new Error('EncString ciphertext length is not a whole number of AES blocks');
  }
  try {
    const decipher = createDecipheriv('aes-256-cbc', key.encKey, iv);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]);
  } catch (cause) {
    throw new Error('EncString decryption failed', { cause });
  }
}

export function encryptText(text: string, key: SymmetricKey): string {
  return encryptToEncString(Buffer.from(text, 'utf8'), key);
}

export function decryptText(enc: string, key: SymmetricKey): string {
  return decryptEncString(enc, key).toString('utf8');
}

/** The clients' account key pair: RSA-2048, DER-encoded (SPKI public, PKCS#8 private). */
export const RSA_KEY_PAIR_OPTIONS: RSAKeyPairOptions<'der', 'der'> = {
  modulusLength: 2048,
  publicExponent: 65537,
  publicKeyEncoding: { type: 'spki', format: 'der' },
  privateKeyEncoding: { type: 'pkcs8', format: 'der' },
};

export function generateRsaKeyPair(): { publicKeyB64: string; privateKeyDer: Buffer } {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', RSA_KEY_PAIR_OPTIONS);
  return { publicKeyB64: publicKey.toString('base64'), privateKeyDer: privateKey };
}

/** EncString type 4 (Rsa2048_OaepSha1_B64): how org keys are handed to members. */
export function rsaEncryptToEncString(data: Buffer, publicKeyB64: string): string {
  const key = createPublicKey({ key: decodeBase64(publicKeyB64, 'public key'), format: 'der', type: 'spki' });
  // Node uses oaepHash for MGF1 as well, giving the SHA-1/MGF1-SHA-1 pair clients expect.
  const ciphertext = publicEncrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, data);
  return `4.${ciphertext.toString('base64')}`;
}

export function rsaDecryptEncString(enc: string, privateKeyDer: Buffer): Buffer {
  if (!enc.startsWith('4.')) {
    throw new Error('only type 4 (RSA-OAEP-SHA1) EncStrings are supported for RSA decryption');
  }
  const body = enc.slice(2);
  if (body.includes('|')) {
    throw new Error('type 4 EncString must have exactly one part');
  }
  const ciphertext = decodeBase64(body, 'RSA ciphertext');
  const key = createPrivateKey({ key: privateKeyDer, format: 'der', type: 'pkcs8' });
  try {
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, ciphertext);
  } catch (cause) {
    throw new Error('RSA EncString decryption failed', { cause });
  }
}

/**
 * RFC 9679 COSE thumbprint of {kty: Symmetric, k: key}; the prefix is the
 * CBOR encoding of that map up to the 64-byte key. The 2026 CLI compares
 * this with the server's userKeyId / encryptedByKeyId.
 */
const COSE_SYMMETRIC_KEY_PREFIX = Buffer.from([0xa2, 0x01, 0x04, 0x20, 0x58, 0x40]);

export function keyId(key: SymmetricKey): string {
  return createHash('sha256')
    .update(COSE_SYMMETRIC_KEY_PREFIX)
    .update(key.raw)
    .digest()
    .subarray(0, 16)
    .toString('hex');
}

export interface TestAccount {
  email: string;
  name: string;
  password: string;
  iterations: number;
  masterKey: Buffer;
  masterPasswordHash: string;
  userKey: SymmetricKey;
  userKeyId: string;
  publicKeyB64: string;
  privateKeyDer: Buffer;
  /** The account's `Key`: user key raw bytes wrapped with the stretched master key. */
  encryptedUserKey: string;
  /** PKCS#8 private key wrapped with the user key. */
  encryptedPrivateKey: string;
}

export const DEFAULT_TEST_PASSWORD = 'correct horse battery staple';
/** The official server refuses fewer; test helpers cache accounts so the cost is paid once per email. */
export const DEFAULT_TEST_ITERATIONS = 600_000;

function resolveIterations(iterations: number | undefined, kdf: KdfSettings | undefined): number {
  if (kdf === undefined) {
    return iterations ?? DEFAULT_TEST_ITERATIONS;
  }
  // Runtime check because settings may arrive from untyped JSON fixtures.
  const kdfType: number = kdf.kdfType;
  if (kdfType === 1) {
    throw new Error(
      'Argon2id (kdfType 1) accounts cannot be built: Node 20 has no built-in Argon2; use kdfType 0 (PBKDF2-SHA256)',
    );
  }
  if (kdfType !== 0) {
    throw new Error(`unknown kdfType ${String(kdfType)}`);
  }
  if (iterations !== undefined && iterations !== kdf.iterations) {
    throw new Error(`conflicting iterations: ${iterations} vs kdf.iterations ${kdf.iterations}`);
  }
  return kdf.iterations;
}

/**
 * Iterations are not clamped to the client's 5000 minimum so tests can
 * build deliberately weak accounts to check that the server refuses them.
 */
export function makeTestAccount(opts: {
  email: string;
  password?: string;
  name?: string;
  iterations?: number;
  kdf?: KdfSettings;
  /**
   * 'stand-in' derives the master key with one iteration while the account still claims
   * `iterations`. The server never sees the password, only the hash derived from the key, so it
   * cannot tell; a client that derives from the password (the official `bw`) would get another
   * key and fail to log in. Saves about 0.4 s per account in in-process tests.
   */
  derivation?: 'real' | 'stand-in';
  /** A key pair made beforehand (test/support/key-pool.ts); a fresh one otherwise. */
  keyPair?: { publicKeyB64: string; privateKeyDer: Buffer };
}): TestAccount {
  const iterations = resolveIterations(opts.iterations, opts.kdf);
  const password = opts.password ?? DEFAULT_TEST_PASSWORD;
  const email = opts.email;
  if (kdfSalt(email) === '') {
    throw new Error('email must not be empty');
  }
  const masterKey = deriveMasterKey(password, email, opts.derivation === 'stand-in' ? 1 : iterations);
  const userKey = generateSymmetricKey();
  const { publicKeyB64, privateKeyDer } = opts.keyPair ?? generateRsaKeyPair();
  return {
    email,
    name: opts.name ?? (kdfSalt(email).split('@')[0] || 'Test User'),
    password,
    iterations,
    masterKey,
    masterPasswordHash: masterPasswordHash(masterKey, password),
    userKey,
    userKeyId: keyId(userKey),
    publicKeyB64,
    privateKeyDer,
    encryptedUserKey: encryptToEncString(userKey.raw, stretchMasterKey(masterKey)),
    encryptedPrivateKey: encryptToEncString(privateKeyDer, userKey),
  };
}

/**
 * Sends the legacy flat fields and the new masterPassword* objects together,
 * as the current web client does, so the server is exercised with the
 * real-world shape rather than one we chose.
 */
export function registerFinishBody(
  account: TestAccount,
  extra?: Record<string, unknown>,
): Record<string, unknown> {
  const salt = kdfSalt(account.email);
  const kdf = () => ({ kdfType: 0, iterations: account.iterations, memory: null, parallelism: null });
  return {
    email: account.email,
    name: account.name,
    masterPasswordHash: account.masterPasswordHash,
    masterPasswordHint: null,
    userSymmetricKey: account.encryptedUserKey,
    userAsymmetricKeys: {
      publicKey: account.publicKeyB64,
      encryptedPrivateKey: account.encryptedPrivateKey,
    },
    kdf: 0,
    kdfIterations: account.iterations,
    kdfMemory: null,
    kdfParallelism: null,
    masterPasswordAuthentication: {
      salt,
      kdf: kdf(),
      masterPasswordAuthenticationHash: account.masterPasswordHash,
    },
    masterPasswordUnlock: {
      salt,
      kdf: kdf(),
      masterKeyWrappedUserKey: account.encryptedUserKey,
    },
    ...extra,
  };
}
