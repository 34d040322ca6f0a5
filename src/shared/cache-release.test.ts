import { afterEach, describe, expect, it, vi } from 'vitest';
import { createCacheRelease, type Releasable } from './cache-release.js';

const dropping = (...rounds: number[]): Releasable & { calls: number } => {
  const cache = {
    calls: 0,
    dropUnused: () => rounds[cache.calls++] ?? 0,
  };
  return cache;
};

afterEach(() => {
  vi.useRealTimers();
});

describe('the cache release', () => {
  it('drops from every cache each round, and collects garbage only after a megabyte or more', () => {
    const collect = vi.fn();
    const sync = dropping(0, 600_000, 0);
    const secrets = dropping(0, 600_000, 1000);
    const release = createCacheRelease({ intervalMs: 60_000, caches: [sync, secrets], collect });
    expect(release.releaseOnce()).toBe(0);
    expect(collect).not.toHaveBeenCalled();
    expect(release.releaseOnce()).toBe(1_200_000);
    expect(collect).toHaveBeenCalledTimes(1);
    expect(release.releaseOnce()).toBe(1000);
    expect(collect).toHaveBeenCalledTimes(1);
    expect([sync.calls, secrets.calls]).toEqual([3, 3]);
  });

  it('runs a round every interval once started, none after it is stopped, and none with an interval of 0', () => {
    vi.useFakeTimers();
    const cache = dropping();
    const release = createCacheRelease({ intervalMs: 60_000, caches: [cache] });
    release.start();
    release.start();
    vi.advanceTimersByTime(180_000);
    expect(cache.calls).toBe(3);
    release.stop();
    vi.advanceTimersByTime(180_000);
    expect(cache.calls).toBe(3);

    const never = dropping();
    createCacheRelease({ intervalMs: 0, caches: [never] }).start();
    vi.advanceTimersByTime(180_000);
    expect(never.calls).toBe(0);
  });
});
