import type { Clock } from '../../clock.js';

/**
 * Counts failed password logins per account and per client IP in a sliding window. When either
 * count reaches its limit, further attempts are refused before the password is even checked,
 * until the oldest failure leaves the window. A successful login clears the account's count.
 * The counters live in this process; with several instances each enforces its own limits.
 */
export function createLoginThrottle(deps: { clock: Clock; perAccount: number; perIp: number; windowSeconds: number }) {
  const failures = new Map<string, number[]>();
  const windowMs = deps.windowSeconds * 1000;

  function recent(key: string): number[] {
    const now = deps.clock.now().getTime();
    const kept = (failures.get(key) ?? []).filter((t) => now - t < windowMs);
    if (kept.length > 0) failures.set(key, kept);
    else failures.delete(key);
    return kept;
  }

  function retryAfter(times: number[], limit: number): number | null {
    if (times.length < limit) return null;
    const oldest = times[times.length - limit] ?? deps.clock.now().getTime();
    return Math.max(1, Math.ceil((oldest + windowMs - deps.clock.now().getTime()) / 1000));
  }

  return {
    /** Seconds to wait before trying again, or null when an attempt is allowed now. */
    blockedFor(account: string, ip: string | null): number | null {
      const byAccount = retryAfter(recent(`a:${account}`), deps.perAccount);
      const byIp = ip ? retryAfter(recent(`i:${ip}`), deps.perIp) : null;
      if (byAccount === null && byIp === null) return null;
      return Math.max(byAccount ?? 0, byIp ?? 0);
    },
    recordFailure(account: string, ip: string | null): void {
      const now = deps.clock.now().getTime();
      for (const key of [`a:${account}`, ...(ip ? [`i:${ip}`] : [])]) {
        failures.set(key, [...recent(key), now]);
      }
    },
    recordSuccess(account: string): void {
      failures.delete(`a:${account}`);
    },
  };
}

export type LoginThrottle = ReturnType<typeof createLoginThrottle>;
