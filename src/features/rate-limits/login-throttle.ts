import type { Clock } from '../../shared/clock.js';
import type { Bucket, LimitStore } from './limit-store.js';
import { keyDigest } from './rate-limits.js';

export type LoginAttempt =
  | { allowed: false; retryAfterSeconds: number }
  | {
      allowed: true;
      /** The password was right: the attempt does not count, and this address's failures for the account are forgiven. */
      succeeded(): Promise<void>;
      /** The attempt does not count (the password was right, a second step is asked for), but nothing is forgiven. */
      released(): Promise<void>;
    };

/**
 * Throttles password logins with three token buckets taken together (src/features/rate-limits):
 * the account from one client address (`perAccountAndIp`), the account from all addresses
 * (`perAccount`, a much higher ceiling, so a stranger guessing from elsewhere cannot lock the
 * owner out), and the address across accounts (`perIp`). Each allows its count at once and gives
 * one attempt back every `windowSeconds / count`.
 *
 * An attempt is taken before the password is checked and given back when it was right, so
 * concurrent guesses are counted exactly: no more than the limit are ever in flight. Accounts
 * are keyed by a digest of the normalized username, so a flood of long names costs no more than
 * short ones; the store bounds the number of keys (in process) or expires them (Redis).
 */
export function createLoginThrottle(deps: {
  clock: Clock;
  store: LimitStore;
  perAccountAndIp: number;
  perAccount: number;
  perIp: number;
  windowSeconds: number;
}) {
  const windowMs = deps.windowSeconds * 1000;
  const bucket = (key: string, count: number): Bucket => ({ key, intervalMs: windowMs / count, burst: count });

  function bucketsOf(account: string, ip: string | null): Bucket[] {
    const who = keyDigest(account);
    const address = ip ?? 'unknown';
    return [
      bucket(`login:ai:${who}:${address}`, deps.perAccountAndIp),
      bucket(`login:a:${who}`, deps.perAccount),
      ...(ip ? [bucket(`login:i:${address}`, deps.perIp)] : []),
    ];
  }

  return {
    /** Takes one attempt for this account from this address, or says how long to wait. */
    async attempt(account: string, ip: string | null): Promise<LoginAttempt> {
      const buckets = bucketsOf(account, ip);
      const decision = await deps.store.consume(buckets, deps.clock.now().getTime());
      if (!decision.allowed) return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(decision.retryAfterMs / 1000)) };
      return {
        allowed: true,
        async succeeded() {
          const [pair, ...shared] = buckets;
          await deps.store.refund(shared, deps.clock.now().getTime());
          if (pair) await deps.store.reset([pair.key]);
        },
        async released() {
          await deps.store.refund(buckets, deps.clock.now().getTime());
        },
      };
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
