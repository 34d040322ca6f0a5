/**
 * The shape of an encrypted string (EncString) as the Bitwarden clients write it:
 * `<encType>.<part>|<part>…`, each part standard base64. The server never decrypts; it only
 * refuses text that no client could decrypt, so that a broken client cannot poison a vault.
 *
 * Parts per encType (bitwarden-crypto's EncString parser):
 *   0 AesCbc256_B64                      iv|data
 *   1 AesCbc128_HmacSha256_B64 (legacy)  iv|data|mac
 *   2 AesCbc256_HmacSha256_B64           iv|data|mac
 *   3 Rsa2048_OaepSha256_B64             data
 *   4 Rsa2048_OaepSha1_B64               data
 *   5 Rsa2048_OaepSha256_HmacSha256_B64  data|mac
 *   6 Rsa2048_OaepSha1_HmacSha256_B64    data|mac
 *   7 Cose_Encrypt0_B64 (XChaCha20)      data
 */
const PARTS_BY_TYPE: Readonly<Record<string, number>> = { 0: 2, 1: 3, 2: 3, 3: 1, 4: 1, 5: 2, 6: 2, 7: 1 };

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

export function isEncString(value: string): boolean {
  const dot = value.indexOf('.');
  if (dot < 1) return false;
  const expected = PARTS_BY_TYPE[value.slice(0, dot)];
  if (expected === undefined) return false;
  const parts = value.slice(dot + 1).split('|');
  if (parts.length !== expected) return false;
  return parts.every((part) => part.length > 0 && BASE64.test(part));
}

/**
 * Standard, padded base64, as the clients write public keys, verifying keys, signed public keys
 * and security states: values the server keeps and returns but never opens.
 */
export function isBase64(value: string): boolean {
  return value.length > 0 && BASE64.test(value);
}

/** The Ajv format name under which request schemas check EncStrings. */
export const ENC_STRING_FORMAT = 'enc-string';
