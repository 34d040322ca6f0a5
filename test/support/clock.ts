import type { Clock } from '../../src/shared/clock.js';

/** A clock tests can move forward without waiting. */
export function testClock(start = new Date()): Clock & { advance(ms: number): void } {
  let now = start.getTime();
  return {
    now: () => new Date(now),
    advance(ms: number) {
      now += ms;
    },
  };
}
