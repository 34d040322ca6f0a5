import type { Clock } from '../../shared/clock.js';
import type { Bucket, Decision, LimitStore } from './limit-store.js';

/**
 * What the limits do while Redis does not answer: `local` counts in this process (each instance
 * then enforces its own limits), `open` lets every request through, `closed` refuses every
 * limited request (503) until Redis answers again.
 */
export type RedisFailureMode = 'local' | 'open' | 'closed';

/** Thrown in `closed` mode while Redis is out of use; each caller answers it in its own envelope. */
export class LimitsUnavailable extends Error {
  constructor(readonly retryAfterSeconds: number) {
    super('Rate limiting is temporarily unavailable.');
    this.name = 'LimitsUnavailable';
  }
}

export interface FailoverOptions {
  primary: LimitStore;
  /** The in-process store `local` mode falls back to. */
  local: LimitStore;
  mode: RedisFailureMode;
  /** Failed calls (timeouts, lost connection) within the window that take Redis out of use. */
  maxRedisTimeoutsThreshold: number;
  /** The window that starts with the first failure; once tripped, Redis is left alone until it ends. */
  slidingWindowSeconds: number;
  clock: Clock;
  onFailure?: (error: unknown, tripped: boolean) => void;
}

/**
 * Redis with a breaker, after the official server's rule: the first failure opens a window of
 * `slidingWindowSeconds`; failures in it are counted, and once they reach
 * `maxRedisTimeoutsThreshold` no call goes to Redis until the window ends. A call that fails, and
 * every call while Redis is out of use, is answered by the failure mode (giving back and clearing
 * never refuse: in `closed` mode they are simply skipped).
 */
export function createFailoverStore(options: FailoverOptions): LimitStore & { usingRedis(): boolean } {
  let window: { endsAt: number; failures: number } | null = null;

  function inUse(now: number): boolean {
    if (window && window.endsAt <= now) window = null;
    return !window || window.failures < options.maxRedisTimeoutsThreshold;
  }

  function failed(error: unknown, now: number): void {
    window ??= { endsAt: now + options.slidingWindowSeconds * 1000, failures: 0 };
    window.failures += 1;
    options.onFailure?.(error, window.failures >= options.maxRedisTimeoutsThreshold);
  }

  function retryAfterSeconds(now: number): number {
    return Math.max(1, Math.ceil(((window?.endsAt ?? now) - now) / 1000));
  }

  async function run<T>(primary: () => Promise<T>, fallback: () => Promise<T>, refuseWhenClosed: boolean): Promise<T> {
    const now = options.clock.now().getTime();
    if (inUse(now)) {
      try {
        return await primary();
      } catch (error) {
        failed(error, options.clock.now().getTime());
      }
    }
    if (options.mode === 'closed' && refuseWhenClosed) throw new LimitsUnavailable(retryAfterSeconds(options.clock.now().getTime()));
    return fallback();
  }

  const passAll = (buckets: readonly Bucket[]): Decision => ({
    allowed: true,
    retryAfterMs: 0,
    buckets: buckets.map((bucket) => ({ remaining: bucket.burst, resetMs: 0 })),
  });

  return {
    consume: (buckets, nowMs) =>
      run(
        () => options.primary.consume(buckets, nowMs),
        async () => (options.mode === 'local' ? options.local.consume(buckets, nowMs) : passAll(buckets)),
        true,
      ),
    refund: (buckets, nowMs) =>
      run(
        () => options.primary.refund(buckets, nowMs),
        async () => (options.mode === 'local' ? options.local.refund(buckets, nowMs) : undefined),
        false,
      ),
    reset: (keys) =>
      run(
        () => options.primary.reset(keys),
        async () => (options.mode === 'local' ? options.local.reset(keys) : undefined),
        false,
      ),
    usingRedis: () => inUse(options.clock.now().getTime()),
  };
}
