import { createPublicKey, type JsonWebKey, type KeyObject } from 'node:crypto';

const PEM_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g;
const SIGNING_KEY_TYPES = new Set(['ed25519', 'rsa', 'ec']);

/**
 * A list of public signing keys as an operator writes it in one setting: PEM blocks one after
 * another, a JWK, a JWK set (`{"keys": [...]}`), or a JSON array of PEM strings and JWKs.
 * Throws with a readable message when any entry is not an Ed25519, RSA or EC public key.
 */
export function parsePublicKeyList(text: string): KeyObject[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  let entries: (string | JsonWebKey)[];
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new Error('not valid JSON');
    }
    if (Array.isArray(parsed)) entries = parsed as (string | JsonWebKey)[];
    else if (parsed && typeof parsed === 'object' && Array.isArray((parsed as { keys?: unknown }).keys)) {
      entries = (parsed as { keys: JsonWebKey[] }).keys;
    } else entries = [parsed as JsonWebKey];
  } else {
    // Environment variables often carry PEM with literal "\n" for line breaks.
    entries = trimmed.replace(/\\n/g, '\n').match(PEM_BLOCK) ?? [];
    if (entries.length === 0) throw new Error('expected PEM "BEGIN PUBLIC KEY" blocks or JSON (JWK, JWK set or array)');
  }
  return entries.map((entry, index) => {
    let key: KeyObject;
    try {
      key = typeof entry === 'string' ? createPublicKey(entry.replace(/\\n/g, '\n')) : createPublicKey({ key: entry, format: 'jwk' });
    } catch (error) {
      throw new Error(`key ${index + 1} is not a public key (${(error as Error).message})`);
    }
    if (!SIGNING_KEY_TYPES.has(key.asymmetricKeyType ?? '')) throw new Error(`key ${index + 1} is ${key.asymmetricKeyType ?? 'unknown'}; expected Ed25519, RSA or EC`);
    return key;
  });
}
