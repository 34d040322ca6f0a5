import { randomBytes, timingSafeEqual } from 'node:crypto';
import { argon2id } from 'hash-wasm';
import { UsageError } from '../../shared/startup-error.js';

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

export const ADMIN_TOKEN_USAGE = `Usage:
  strongroom admin-token [--token <token>]
      Prints a new random admin token and the ADMIN_TOKEN setting (its Argon2id hash) that
      turns on the admin console at /admin. Keep the token itself to sign in; put only the
      hash in the server's settings. --token hashes a token of your own choosing instead
      (at least 16 characters); prefer the random one.`;


/** `strongroom admin-token`: what it prints. */
export async function runAdminTokenCommand(argv: readonly string[]): Promise<string> {
  let token: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--help' || arg === '-h') return `${ADMIN_TOKEN_USAGE}\n`;
    if (arg === '--token') {
      token = argv[++i];
      if (token === undefined) throw new UsageError('--token needs a value.');
    } else throw new UsageError(`Unknown argument "${arg ?? ''}".\n${ADMIN_TOKEN_USAGE}`);
  }
  if (token !== undefined && token.length < 16) throw new UsageError('--token: use at least 16 characters (or no --token for a random one).');
  const chosen = token ?? newAdminToken();
  const hash = await hashAdminToken(chosen);
  return [
    ...(token === undefined ? [`Admin token (sign in at PUBLIC_URL/admin with it; it is shown only now): ${chosen}`] : []),
    'Setting for the server (environment or .env; in docker-compose files write each $ as $$):',
    `ADMIN_TOKEN='${hash}'`,
    '',
  ].join('\n');
}
