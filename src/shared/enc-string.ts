/**
 * Encrypted strings are opaque to the server; it only checks their shape, so that garbage is
 * refused with a 400 instead of breaking clients later. Shapes per encryption type:
 * `<type>.<part>|<part>…`, each part base64.
 */
const PARTS_BY_TYPE: Record<number, number> = {
  0: 2, // AesCbc256_B64: iv|data
  1: 3, // AesCbc128_HmacSha256_B64 (obsolete)
  2: 3, // AesCbc256_HmacSha256_B64: iv|data|mac
  3: 1, // Rsa2048_OaepSha256_B64
  4: 1, // Rsa2048_OaepSha1_B64
  5: 2, // Rsa2048_OaepSha256_HmacSha256_B64: data|mac
  6: 2, // Rsa2048_OaepSha1_HmacSha256_B64
  7: 1, // XChaCha20Poly1305 COSE Encrypt0
};

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

export function isEncString(value: string): boolean {
  const dot = value.indexOf('.');
  let type: number;
  let body: string;
  if (dot === -1) {
    // Very old clients sent no type prefix: two parts mean type 0, three mean type 1.
    body = value;
    type = value.split('|').length === 3 ? 1 : 0;
  } else {
    const prefix = value.slice(0, dot);
    if (!/^\d+$/.test(prefix)) return false;
    type = Number(prefix);
    body = value.slice(dot + 1);
  }
  const expected = PARTS_BY_TYPE[type];
  if (expected === undefined) return false;
  const parts = body.split('|');
  return parts.length === expected && parts.every((part) => BASE64.test(part));
}

/** Names every field of `fields` that is present but not an encrypted string. */
export function invalidEncStrings(fields: Record<string, unknown>): string[] {
  return Object.entries(fields)
    .filter(([, value]) => value !== null && value !== undefined && (typeof value !== 'string' || !isEncString(value)))
    .map(([name]) => name);
}

export const ENC_STRING_MESSAGE = 'is not a valid encrypted string.';
