import { pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { TooManyRequests } from '../../http/errors.js';

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

/**
 * Runs at most `concurrency` hashes at once and lets at most `queueLimit` wait; past that it
 * refuses at once (429 with Retry-After), so a flood of registrations or logins queues no
 * unbounded work and leaves the thread pool to requests that need no hash.
 */
export function boundedRunner(concurrency: number, queueLimit: number) {
  let running = 0;
  let lastMs = 100;
  const waiting: (() => void)[] = [];
  return async function run<T>(task: () => Promise<T>): Promise<T> {
    if (running < concurrency) running++;
    else {
      if (waiting.length >= queueLimit) {
        const seconds = Math.max(1, Math.ceil(((waiting.length + 1) * lastMs) / concurrency / 1000));
        throw new TooManyRequests('The server is busy checking passwords. Try again in a moment.', seconds);
      }
      // A finishing task hands its slot over: `running` stays as it is.
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    const started = performance.now();
    try {
      return await task();
    } finally {
      lastMs = performance.now() - started;
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

export function createPasswordHasher({ iterations, concurrency = 2, queueLimit = 64 }: { iterations: number; concurrency?: number; queueLimit?: number }): PasswordHasher {
  const run = boundedRunner(concurrency, queueLimit);
  const pbkdf2Bounded = (secret: string, salt: Buffer | string, rounds: number, bytes: number) => run(() => pbkdf2Async(secret, salt, rounds, bytes, 'sha256'));
  return {
    async hash(secret) {
      const salt = randomBytes(SALT_BYTES);
      const hash = await pbkdf2Bounded(secret, salt, iterations, HASH_BYTES);
      return `${SCHEME}$${iterations}$${salt.toString('base64')}$${hash.toString('base64')}`;
    },
    async verify(secret, stored) {
      const [scheme, iterText, saltText, hashText] = (stored ?? '').split('$');
      const storedIterations = Number(iterText);
      if (scheme !== SCHEME || !Number.isInteger(storedIterations) || !saltText || !hashText) {
        // Spend the same time as a real check so unknown accounts are not told apart by timing.
        await pbkdf2Bounded(secret, 'no-such-account', iterations, HASH_BYTES);
        return false;
      }
      const expected = Buffer.from(hashText, 'base64');
      const actual = await pbkdf2Bounded(secret, Buffer.from(saltText, 'base64'), storedIterations, expected.length);
      return actual.length === expected.length && timingSafeEqual(actual, expected);
    },
  };
}
