import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { testService } from '../../../test/support/services.js';
import { createMemoryStore, createRedisStore, REDIS_KEY_PREFIX, type Bucket, type LimitStore } from './limit-store.js';

const REDIS_URL = testService('redis');
const clients: Redis[] = [];
afterAll(() => {
  for (const client of clients) client.disconnect();
});

function redisStore(): LimitStore {
  const client = new Redis(REDIS_URL ?? '');
  clients.push(client);
  return createRedisStore(client);
}

const engines: [string, () => LimitStore][] = [['in process', () => createMemoryStore({ maxKeys: 1000 })]];
if (REDIS_URL) engines.push(['in Redis', redisStore]);

/** 100 a minute (one back every 600 ms), 20 at once: the public API's defaults. */
const bucket = (key: string = randomUUID()): Bucket => ({ key, intervalMs: 600, burst: 20 });
const T0 = 1_800_000_000_000;

describe.each(engines)('the limit store %s', (_name, make) => {
  it('allows the burst at once, then refuses with the wait for the next request', async () => {
    const store = make();
    const b = bucket();
    const remaining: number[] = [];
    for (let i = 0; i < 20; i++) {
      const d = await store.consume([b], T0);
      expect(d.allowed).toBe(true);
      remaining.push(d.buckets[0]!.remaining);
    }
    expect(remaining).toEqual([19, 18, 17, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);
    const refused = await store.consume([b], T0);
    expect(refused).toMatchObject({ allowed: false, retryAfterMs: 600, buckets: [{ remaining: 0, resetMs: 12_000 }] });
  });

  it('refills one request per interval, never past the burst', async () => {
    const store = make();
    const b = bucket();
    for (let i = 0; i < 20; i++) await store.consume([b], T0);
    expect((await store.consume([b], T0 + 599)).allowed).toBe(false);
    expect((await store.consume([b], T0 + 600)).allowed).toBe(true);
    expect((await store.consume([b], T0 + 600)).allowed).toBe(false);
    // A minute later the bucket is full again, but holds no more than its burst.
    const later = await store.consume([b], T0 + 600_000);
    expect(later.buckets[0]).toEqual({ remaining: 19, resetMs: 600 });
  });

  it('counts a refused request against nothing: all buckets must have room, or none is taken', async () => {
    const store = make();
    const small: Bucket = { key: randomUUID(), intervalMs: 1000, burst: 1 };
    const big = bucket();
    expect((await store.consume([big, small], T0)).allowed).toBe(true);
    const refused = await store.consume([big, small], T0);
    expect(refused.allowed).toBe(false);
    expect(refused.retryAfterMs).toBe(1000);
    expect(refused.buckets[0]!.remaining).toBe(19);
  });

  it('gives a request back on refund and empties a bucket on reset', async () => {
    const store = make();
    const b = bucket();
    for (let i = 0; i < 20; i++) await store.consume([b], T0);
    await store.refund([b], T0);
    expect((await store.consume([b], T0)).allowed).toBe(true);
    expect((await store.consume([b], T0)).allowed).toBe(false);
    await store.reset([b.key]);
    expect((await store.consume([b], T0)).buckets[0]!.remaining).toBe(19);
  });

  it('takes exactly the burst from 200 concurrent requests', async () => {
    const store = make();
    const b = bucket();
    const decisions = await Promise.all(Array.from({ length: 200 }, () => store.consume([b], T0)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(20);
  });
});

describe('the in-process store', () => {
  it('keeps at most maxKeys counters whatever keys are sent, dropping the one touched longest ago', async () => {
    const store = createMemoryStore({ maxKeys: 100 });
    for (let i = 0; i < 10_000; i++) await store.consume([bucket(`k${i}`)], T0);
    expect(store.size()).toBe(100);
    // The newest keys survive; the oldest were dropped (and start full again).
    expect((await store.consume([bucket('k9999')], T0)).buckets[0]!.remaining).toBe(18);
    expect((await store.consume([bucket('k0')], T0)).buckets[0]!.remaining).toBe(19);
  });

  it('needs no entry for a full bucket', async () => {
    const store = createMemoryStore({ maxKeys: 100 });
    await store.consume([bucket('a')], T0);
    await store.refund([bucket('a')], T0);
    expect(store.size()).toBe(0);
  });
});

describe.skipIf(!REDIS_URL)('the Redis store', () => {
  it('lets a counter expire when its bucket is full again, under its own key prefix', async () => {
    const client = new Redis(REDIS_URL ?? '');
    clients.push(client);
    const store = createRedisStore(client);
    const key = randomUUID();
    await store.consume([bucket(key)], Date.now());
    const ttl = await client.pttl(REDIS_KEY_PREFIX + key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(600);
  });
});
