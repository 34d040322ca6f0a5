import { constants, createDecipheriv, createHmac, createPrivateKey, createPublicKey, privateDecrypt, publicEncrypt, randomBytes, timingSafeEqual } from 'node:crypto';
import { encryptType2 } from '../../features/accounts/client-keys.js';

/**
 * The client-side algorithms an operator command needs to act as an official client
 * (bitwarden-crypto, official-clients.md §9–§10): EncString type 2 under a 64-byte symmetric key
 * (AES-256-CBC with the first half, HMAC-SHA256 with the second) and type 4, RSA-OAEP with
 * SHA-1, for handing a key to a member's public key. A symmetric key is its 64 raw bytes.
 */

const KEY_BYTES = 64;

/** A fresh 64-byte symmetric key (an organization key, a project's or a token's). */
export function generateSymmetricKey(): Buffer {
  return randomBytes(KEY_BYTES);
}

function checkKey(key: Buffer): void {
  if (key.length !== KEY_BYTES) throw new Error(`A symmetric key has ${KEY_BYTES} bytes, not ${key.length}.`);
}

export function encryptBytes(plain: Buffer, key: Buffer): string {
  checkKey(key);
  return encryptType2(plain, key);
}

export function encryptString(text: string, key: Buffer): string {
  return encryptBytes(Buffer.from(text, 'utf8'), key);
}

/**
 * Strict base64: Buffer.from skips characters it does not know, and a damaged EncString should
 * be reported as such rather than decrypted into garbage.
 */
function base64(text: string, what: string): Buffer {
  if (text.length === 0 || text.length % 4 !== 0 || !/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new Error(`The EncString's ${what} is not base64.`);
  return Buffer.from(text, 'base64');
}

/** Opens an EncString type 2, checking its MAC before touching the padding. */
export function decryptBytes(enc: string, key: Buffer): Buffer {
  checkKey(key);
  if (!enc.startsWith('2.')) throw new Error(`Expected an EncString of type 2, got type "${enc.split('.')[0] ?? ''}".`);
  const parts = enc.slice(2).split('|');
  if (parts.length !== 3) throw new Error('An EncString of type 2 has three parts.');
  const [iv, data, mac] = [base64(parts[0] ?? '', 'IV'), base64(parts[1] ?? '', 'data'), base64(parts[2] ?? '', 'MAC')];
  const expected = createHmac('sha256', key.subarray(32)).update(iv).update(data).digest();
  if (iv.length !== 16 || mac.length !== expected.length || !timingSafeEqual(mac, expected)) {
    throw new Error('The EncString does not open with this key (MAC mismatch).');
  }
  const decipher = createDecipheriv('aes-256-cbc', key.subarray(0, 32), iv);
  return Buffer.concat([decipher.update(data), decipher.final()]);
}

export function decryptString(enc: string, key: Buffer): string {
  return decryptBytes(enc, key).toString('utf8');
}

/** EncString type 4: `keyBytes` encrypted to an SPKI public key (base64), as members' keys are. */
export function rsaWrap(keyBytes: Buffer, publicKeyB64: string): string {
  const key = createPublicKey({ key: base64(publicKeyB64, 'public key'), format: 'der', type: 'spki' });
  // oaepHash also sets MGF1's hash: SHA-1 for both, as the clients use.
  return `4.${publicEncrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, keyBytes).toString('base64')}`;
}

/** Opens an EncString type 4 with a PKCS#8 private key. */
export function rsaUnwrap(enc: string, privateKeyDer: Buffer): Buffer {
  if (!enc.startsWith('4.') || enc.includes('|')) throw new Error('Expected an EncString of type 4 (RSA-OAEP-SHA1).');
  const key = createPrivateKey({ key: privateKeyDer, format: 'der', type: 'pkcs8' });
  return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, base64(enc.slice(2), 'RSA data'));
}

/** The SPKI public key (base64) of a PKCS#8 private key. */
export function publicKeyOf(privateKeyDer: Buffer): string {
  return createPublicKey(createPrivateKey({ key: privateKeyDer, format: 'der', type: 'pkcs8' })).export({ type: 'spki', format: 'der' }).toString('base64');
}
