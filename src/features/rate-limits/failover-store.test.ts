import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { testClock } from '../../../test/support/clock.js';
import { createFailoverStore, LimitsUnavailable, type RedisFailureMode } from './failover-store.js';
import { createMemoryStore, createRedisStore, type Bucket, type LimitStore } from './limit-store.js';

const b: Bucket = { key: 'k', intervalMs: 1000, burst: 1 };

/** A primary that fails while `down` is set, and counts the calls it gets. */
function flakyPrimary() {
  const inner = createMemoryStore({ maxKeys: 100 });
  const state = { down: false, calls: 0 };
  const store: LimitStore = {
    consume: async (buckets, now) => {
      state.calls += 1;
      if (state.down) throw new Error('Command timed out');
      return inner.consume(buckets, now);
    },
    refund: async (buckets, now) => inner.refund(buckets, now),
    reset: async (keys) => inner.reset(keys),
  };
  return { store, state };
}

function setup(mode: RedisFailureMode) {
  const clock = testClock();
  const primary = flakyPrimary();
  const failures: boolean[] = [];
  const store = createFailoverStore({
    primary: primary.store,
    local: createMemoryStore({ maxKeys: 100 }),
    mode,
    maxRedisTimeoutsThreshold: 3,
    slidingWindowSeconds: 60,
    clock,
    onFailure: (_error, tripped) => failures.push(tripped),
  });
  return { clock, primary, store, failures };
}

describe('the Redis breaker', () => {
  it('stops calling Redis after maxRedisTimeoutsThreshold failures until slidingWindowSeconds have passed', async () => {
    const { clock, primary, store, failures } = setup('open');
    primary.state.down = true;
    for (let i = 0; i < 5; i++) await store.consume([b], clock.now().getTime());
    expect(primary.state.calls).toBe(3);
    expect(failures).toEqual([false, false, true]);
    expect(store.usingRedis()).toBe(false);
    primary.state.down = false;
    clock.advance(59_000);
    await store.consume([b], clock.now().getTime());
    expect(primary.state.calls).toBe(3);
    clock.advance(1_000);
    expect((await store.consume([b], clock.now().getTime())).allowed).toBe(true);
    expect(primary.state.calls).toBe(4);
  });

  it('forgets failures that stay under the threshold once their window ends', async () => {
    const { clock, primary, store } = setup('open');
    primary.state.down = true;
    await store.consume([b], clock.now().getTime());
    await store.consume([b], clock.now().getTime());
    clock.advance(60_000);
    await store.consume([b], clock.now().getTime());
    await store.consume([b], clock.now().getTime());
    expect(store.usingRedis()).toBe(true);
  });

  it('fails open: every request passes while Redis is out of use', async () => {
    const { clock, primary, store } = setup('open');
    primary.state.down = true;
    const decisions = await Promise.all(Array.from({ length: 10 }, () => store.consume([b], clock.now().getTime())));
    expect(decisions.every((d) => d.allowed)).toBe(true);
  });

  it('fails closed: limited requests are refused with the time Redis stays out of use', async () => {
    const { clock, primary, store } = setup('closed');
    primary.state.down = true;
    for (let i = 0; i < 3; i++) await expect(store.consume([b], clock.now().getTime())).rejects.toBeInstanceOf(LimitsUnavailable);
    clock.advance(20_000);
    await expect(store.consume([b], clock.now().getTime())).rejects.toMatchObject({ retryAfterSeconds: 40 });
    // Giving back never fails a request that already passed.
    await expect(store.refund([b], clock.now().getTime())).resolves.toBeUndefined();
  });

  it('fails local: the process counts on its own while Redis is out of use', async () => {
    const { clock, primary, store } = setup('local');
    primary.state.down = true;
    const now = clock.now().getTime();
    expect((await store.consume([b], now)).allowed).toBe(true);
    expect((await store.consume([b], now)).allowed).toBe(false);
  });

  it('counts an unreachable Redis as failures within the command timeout', async () => {
    const clock = testClock();
    // Nothing listens on port 1: connecting fails at once and the check falls back.
    const client = new Redis('redis://127.0.0.1:1', { commandTimeout: 200, maxRetriesPerRequest: 0, lazyConnect: false });
    client.on('error', () => undefined);
    try {
      const tripped: boolean[] = [];
      const store = createFailoverStore({
        primary: createRedisStore(client),
        local: createMemoryStore({ maxKeys: 100 }),
        mode: 'local',
        maxRedisTimeoutsThreshold: 2,
        slidingWindowSeconds: 60,
        clock,
        onFailure: (_error, isTripped) => tripped.push(isTripped),
      });
      const started = Date.now();
      for (let i = 0; i < 4; i++) expect((await store.consume([{ ...b, burst: 10 }], clock.now().getTime())).allowed).toBe(true);
      expect(Date.now() - started).toBeLessThan(2000);
      expect(tripped).toEqual([false, true]);
    } finally {
      client.disconnect();
    }
  });
});
