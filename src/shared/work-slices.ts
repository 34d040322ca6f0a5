import { TooManyRequests } from '../http/errors.js';

/**
 * How long a slice of a request's work may hold the event loop before letting other requests run
 * (docs/security.md: no request holds the loop much past 20 ms).
 */
export const SLICE_MS = 8;

/** Lets the event loop run what is waiting (timers, sockets, other requests) before going on. */
export function yieldToLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * `work` applied to each item in order, yielding to the event loop whenever a slice has run for
 * SLICE_MS, so that work proportional to a request's input never holds the loop for long.
 */
export async function mapInSlices<T, R>(items: readonly T[], work: (item: T, index: number) => R): Promise<R[]> {
  const out: R[] = [];
  let sliceStarted = performance.now();
  for (let i = 0; i < items.length; i++) {
    out.push(work(items[i] as T, i));
    if (performance.now() - sliceStarted > SLICE_MS) {
      await yieldToLoop();
      sliceStarted = performance.now();
    }
  }
  return out;
}

/**
 * Runs heavy tasks a few at a time: tasks of one key (a user) run one after another, so one
 * caller's work queues behind its own; at most `concurrency` run at once in all, so several
 * callers together take a bounded share of the process; and past `queueLimit` waiting tasks a
 * new one is refused with 429 rather than held.
 */
export function createWorkQueue({ concurrency, queueLimit, busy }: { concurrency: number; queueLimit: number; busy: string }) {
  let running = 0;
  let waitingCount = 0;
  const waiting: (() => void)[] = [];
  /** The last task of each key, which the key's next task waits for. */
  const tails = new Map<string, Promise<unknown>>();

  async function slot(): Promise<void> {
    if (running < concurrency) {
      running++;
      return;
    }
    // A finishing task hands its slot over: `running` stays as it is.
    await new Promise<void>((resolve) => waiting.push(resolve));
  }

  function release(): void {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }

  return async function run<T>(key: string, task: () => Promise<T>): Promise<T> {
    if (waitingCount >= queueLimit) throw new TooManyRequests(busy, 5);
    waitingCount++;
    const before = tails.get(key);
    const done = (async () => {
      try {
        await before?.catch(() => undefined);
        await slot();
      } finally {
        waitingCount--;
      }
      try {
        return await task();
      } finally {
        release();
      }
    })();
    tails.set(key, done);
    try {
      return await done;
    } finally {
      if (tails.get(key) === done) tails.delete(key);
    }
  };
}

export type WorkQueue = ReturnType<typeof createWorkQueue>;
