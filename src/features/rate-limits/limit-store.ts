/**
 * The counters behind every limit (the public API's per-organization limit, the IP rules, the
 * login throttle): token buckets kept as GCRA "theoretical arrival times", one number a key.
 *
 * A bucket of `burst` requests refills one request every `intervalMs`. Its state is the time at
 * which it would be full again (the TAT); a request is allowed when, after adding one interval,
 * the TAT lies at most `burst` intervals ahead of now. Several buckets are checked and taken
 * together: a request is allowed only when every bucket has room, and a refused request takes
 * nothing from any of them.
 *
 * Two stores keep the TATs: one in this process (bounded in keys) and one in Redis, where a Lua
 * script does the check and the update atomically so that several instances share one limit.
 */
import type { Redis } from 'ioredis';

export interface Bucket {
  /** Identifies the counter; callers keep it short and bounded (hash what the caller sends). */
  key: string;
  /** Milliseconds for one request to come back. */
  intervalMs: number;
  /** Requests the full bucket allows at once. */
  burst: number;
}

export interface BucketState {
  /** Requests that would pass right now. */
  remaining: number;
  /** Milliseconds until the bucket is full again. */
  resetMs: number;
}

export interface Decision {
  allowed: boolean;
  /** Milliseconds until a refused request would pass (0 when allowed). */
  retryAfterMs: number;
  /** Each bucket's state after the decision, in the order asked. */
  buckets: BucketState[];
}

export interface LimitStore {
  /** Takes one request from every bucket, or from none when one of them is empty. */
  consume(buckets: readonly Bucket[], nowMs: number): Promise<Decision>;
  /** Gives one request back to every bucket (an attempt that turned out not to count). */
  refund(buckets: readonly Bucket[], nowMs: number): Promise<void>;
  /** Empties the counters: the buckets are full again. */
  reset(keys: readonly string[]): Promise<void>;
}

/** The decision for buckets whose TATs (clamped to now) are `tats`; `next` are the TATs to store when allowed. */
export function decide(buckets: readonly Bucket[], tats: readonly number[], nowMs: number): { decision: Decision; next: number[] } {
  let retryAfterMs = 0;
  const next = buckets.map((bucket, i) => {
    const tat = Math.max(tats[i] ?? nowMs, nowMs);
    const candidate = tat + bucket.intervalMs;
    const allowAt = candidate - bucket.burst * bucket.intervalMs;
    if (allowAt > nowMs) retryAfterMs = Math.max(retryAfterMs, allowAt - nowMs);
    return candidate;
  });
  const allowed = retryAfterMs === 0;
  const kept = allowed ? next : buckets.map((_, i) => Math.max(tats[i] ?? nowMs, nowMs));
  return { decision: { allowed, retryAfterMs, buckets: buckets.map((bucket, i) => stateOf(bucket, kept[i] ?? nowMs, nowMs)) }, next };
}

export function stateOf(bucket: Bucket, tat: number, nowMs: number): BucketState {
  const ahead = Math.max(0, tat - nowMs);
  // The epsilon keeps 19.999999 from reading as 19 when intervals are not whole milliseconds.
  const remaining = Math.floor((bucket.burst * bucket.intervalMs - ahead) / bucket.intervalMs + 1e-9);
  return { remaining: Math.min(bucket.burst, Math.max(0, remaining)), resetMs: ahead };
}

/**
 * The TATs in this process. Memory is bounded by `maxKeys` whatever keys callers send: a full
 * bucket needs no entry (it is dropped when read), and past the bound the entry touched longest
 * ago goes first.
 */
export function createMemoryStore(options: { maxKeys: number }): LimitStore & { size(): number } {
  const tats = new Map<string, number>();

  function read(key: string, nowMs: number): number {
    const tat = tats.get(key);
    if (tat === undefined) return nowMs;
    if (tat <= nowMs) {
      tats.delete(key);
      return nowMs;
    }
    return tat;
  }

  function write(key: string, tat: number, nowMs: number): void {
    // Delete first so the entry moves to the end of the insertion order (least recently touched first).
    tats.delete(key);
    if (tat <= nowMs) return;
    tats.set(key, tat);
    while (tats.size > options.maxKeys) {
      const oldest = tats.keys().next();
      if (oldest.done) break;
      tats.delete(oldest.value);
    }
  }

  return {
    async consume(buckets, nowMs) {
      const current = buckets.map((bucket) => read(bucket.key, nowMs));
      const { decision, next } = decide(buckets, current, nowMs);
      if (decision.allowed) buckets.forEach((bucket, i) => write(bucket.key, next[i] ?? nowMs, nowMs));
      return decision;
    },
    async refund(buckets, nowMs) {
      for (const bucket of buckets) write(bucket.key, read(bucket.key, nowMs) - bucket.intervalMs, nowMs);
    },
    async reset(keys) {
      for (const key of keys) tats.delete(key);
    },
    size: () => tats.size,
  };
}

/**
 * KEYS: the buckets; ARGV: now, then interval and burst per bucket. Answers the allowed flag
 * (1/0), then the TAT each bucket holds after the decision, as strings (Lua numbers reach the
 * client as truncated integers otherwise). A stored key expires when its bucket is full again.
 */
const CONSUME_SCRIPT = `
local now = tonumber(ARGV[1])
local n = #KEYS
local tats = {}
local nexts = {}
local allowed = 1
for i = 1, n do
  local interval = tonumber(ARGV[2 * i])
  local burst = tonumber(ARGV[2 * i + 1])
  local tat = tonumber(redis.call('GET', KEYS[i])) or now
  if tat < now then tat = now end
  tats[i] = tat
  nexts[i] = tat + interval
  if nexts[i] - burst * interval > now then allowed = 0 end
end
local out = { allowed }
for i = 1, n do
  local kept = tats[i]
  if allowed == 1 then
    kept = nexts[i]
    redis.call('SET', KEYS[i], string.format('%.17g', kept), 'PX', math.max(1, math.ceil(kept - now)))
  end
  out[i + 1] = string.format('%.17g', kept)
end
return out
`;

/** KEYS: the buckets; ARGV: now, then the interval per bucket. Moves each TAT back one interval. */
const REFUND_SCRIPT = `
local now = tonumber(ARGV[1])
for i = 1, #KEYS do
  local tat = tonumber(redis.call('GET', KEYS[i]))
  if tat then
    tat = tat - tonumber(ARGV[i + 1])
    if tat > now then
      redis.call('SET', KEYS[i], string.format('%.17g', tat), 'PX', math.max(1, math.ceil(tat - now)))
    else
      redis.call('DEL', KEYS[i])
    end
  end
end
return 1
`;

interface LimitCommands {
  strongroomLimitConsume(...args: (string | number)[]): Promise<string[] | [number, ...string[]]>;
  strongroomLimitRefund(...args: (string | number)[]): Promise<number>;
}

/** Every key this store writes starts with this, so operators can find (and flush) them. */
export const REDIS_KEY_PREFIX = 'strongroom:limit:';

/**
 * The TATs in Redis. The caller's clock gives "now", so that every instance and the tests agree
 * on time as the app sees it; instances should keep their clocks in step (NTP), as the tokens
 * they sign already require.
 */
export function createRedisStore(redis: Redis): LimitStore {
  const commands = redis as unknown as Redis & LimitCommands;
  if (!('strongroomLimitConsume' in redis)) {
    redis.defineCommand('strongroomLimitConsume', { lua: CONSUME_SCRIPT });
    redis.defineCommand('strongroomLimitRefund', { lua: REFUND_SCRIPT });
  }
  const keyOf = (key: string) => REDIS_KEY_PREFIX + key;
  return {
    async consume(buckets, nowMs) {
      const args = buckets.flatMap((bucket) => [bucket.intervalMs, bucket.burst]);
      const reply = await commands.strongroomLimitConsume(buckets.length, ...buckets.map((b) => keyOf(b.key)), nowMs, ...args);
      const tats = reply.slice(1).map((value) => Number(value));
      if (Number(reply[0]) === 1) {
        return { allowed: true, retryAfterMs: 0, buckets: buckets.map((bucket, i) => stateOf(bucket, tats[i] ?? nowMs, nowMs)) };
      }
      // Refused: the TATs are unchanged, and the same arithmetic says how long to wait.
      const { decision } = decide(buckets, tats, nowMs);
      return { ...decision, allowed: false, retryAfterMs: Math.max(1, decision.retryAfterMs) };
    },
    async refund(buckets, nowMs) {
      await commands.strongroomLimitRefund(buckets.length, ...buckets.map((b) => keyOf(b.key)), nowMs, ...buckets.map((b) => b.intervalMs));
    },
    async reset(keys) {
      if (keys.length > 0) await redis.del(...keys.map(keyOf));
    },
  };
}
