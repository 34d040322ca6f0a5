import { randomBytes, timingSafeEqual } from 'node:crypto';
import { argon2id } from 'hash-wasm';

/**
 * The operator's admin token. The server keeps only its Argon2id hash as a PHC string
 * (`$argon2id$v=19$m=…,t=…,p=…$salt$hash`, the form ADMIN_TOKEN takes); Node has no Argon2, so
 * it comes from hash-wasm, as the client-side key derivation of `strongroom users` does.
 * The cost is OWASP's first Argon2id choice (19 MiB, 2 passes): slow enough to make an offline
 * guess expensive, quick enough (tens of milliseconds) for a throttled sign-in form.
 */
const COST = { memorySize: 19_456, iterations: 2, parallelism: 1, hashLength: 32 } as const;
const PHC = /^\$argon2id\$v=19\$m=(\d+),t=(\d+),p=(\d+)\$([A-Za-z0-9+/]+)\$([A-Za-z0-9+/]+)$/;

/** A new random token: 32 bytes, base64url (43 characters). */
export function newAdminToken(): string {
  return randomBytes(32).toString('base64url');
}

export async function hashAdminToken(token: string): Promise<string> {
  return argon2id({ password: token, salt: randomBytes(16), ...COST, outputType: 'encoded' });
}

function unpadded(base64: string): Buffer {
  return Buffer.from(base64, 'base64');
}

/**
 * Whether `token` is the one `phc` was made from. The hash is recomputed with the stored
 * parameters and compared in constant time (hash-wasm's own verify compares strings).
 */
export async function verifyAdminToken(token: string, phc: string): Promise<boolean> {
  const match = PHC.exec(phc);
  if (!match) return false;
  const [, memory, iterations, parallelism, salt = '', hash = ''] = match;
  const expected = unpadded(hash);
  const actual = await argon2id({
    password: token,
    salt: unpadded(salt),
    memorySize: Number(memory),
    iterations: Number(iterations),
    parallelism: Number(parallelism),
    hashLength: expected.length,
    outputType: 'binary',
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
