import { pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const pbkdf2Async = promisify(pbkdf2);
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const SCHEME = 'pbkdf2-sha256';

/**
 * The client's master password hash is itself a secret; the server keeps only a salted,
 * slow hash of it. PBKDF2 runs on libuv's thread pool, off the event loop. The iteration
 * count is stored with each hash, so raising the setting never locks anyone out.
 */
export interface PasswordHasher {
  hash(secret: string): Promise<string>;
  verify(secret: string, stored: string | null): Promise<boolean>;
}

export function createPasswordHasher({ iterations }: { iterations: number }): PasswordHasher {
  return {
    async hash(secret) {
      const salt = randomBytes(SALT_BYTES);
      const hash = await pbkdf2Async(secret, salt, iterations, HASH_BYTES, 'sha256');
      return `${SCHEME}$${iterations}$${salt.toString('base64')}$${hash.toString('base64')}`;
    },
    async verify(secret, stored) {
      const [scheme, iterText, saltText, hashText] = (stored ?? '').split('$');
      const storedIterations = Number(iterText);
      if (scheme !== SCHEME || !Number.isInteger(storedIterations) || !saltText || !hashText) {
        // Spend the same time as a real check so unknown accounts are not told apart by timing.
        await pbkdf2Async(secret, 'no-such-account', iterations, HASH_BYTES, 'sha256');
        return false;
      }
      const expected = Buffer.from(hashText, 'base64');
      const actual = await pbkdf2Async(secret, Buffer.from(saltText, 'base64'), storedIterations, expected.length, 'sha256');
      return actual.length === expected.length && timingSafeEqual(actual, expected);
    },
  };
}
