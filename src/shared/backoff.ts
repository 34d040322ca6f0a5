/** How retries space out: the first wait, doubled each time up to a cap. */
export interface Backoff {
  baseMs: number;
  /** Longest wait between two tries. */
  capMs: number;
}

/**
 * The wait before retry number `attempt + 1`: base × 2^attempt, capped, with "equal jitter" (half
 * fixed, half random), so that many failures at once do not all come back at once.
 */
export function backoffMs(policy: Backoff, attempt: number, random = Math.random): number {
  const exp = Math.min(policy.capMs, policy.baseMs * 2 ** Math.min(attempt, 30));
  return Math.round(exp / 2 + random() * (exp / 2));
}
