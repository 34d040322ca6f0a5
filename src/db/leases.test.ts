import { describe, expect, it } from 'vitest';
import { everyInterval, type Lease } from './leases.js';

describe('everyInterval', () => {
  it('runs at once and every interval, never two runs at once, and stop waits for the run and gives the lease back', async () => {
    let runs = 0;
    let inFlight = 0;
    let most = 0;
    let finish: (() => void) | undefined;
    let released = 0;
    const lease: Lease = { acquire: () => Promise.resolve(true), release: () => Promise.resolve(void released++) };
    const job = everyInterval(
      5,
      () =>
        new Promise<void>((resolve) => {
          runs++;
          most = Math.max(most, ++inFlight);
          finish = () => {
            inFlight--;
            resolve();
          };
        }),
      lease,
    );
    const errors: unknown[] = [];
    job.start((error) => errors.push(error));
    expect(runs).toBe(1);
    await new Promise((r) => setTimeout(r, 40));
    // Ticks while the first run is in flight start nothing.
    expect(runs).toBe(1);
    finish?.();
    await new Promise((r) => setTimeout(r, 40));
    expect(runs).toBeGreaterThan(1);
    const stopped = job.stop();
    let done = false;
    void stopped.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(done).toBe(false);
    finish?.();
    await stopped;
    expect(most).toBe(1);
    expect(released).toBe(1);
    expect(errors).toEqual([]);
  });

  it('hands a failed run to onError and runs again at the next interval', async () => {
    let runs = 0;
    const heard: string[] = [];
    const job = everyInterval(5, () => (++runs === 1 ? Promise.reject(new Error('database down')) : Promise.resolve()), undefined, (result) => heard.push(result));
    const errors: unknown[] = [];
    job.start((error) => errors.push(error));
    await new Promise((r) => setTimeout(r, 40));
    await job.stop();
    expect((errors[0] as Error).message).toBe('database down');
    expect(runs).toBeGreaterThan(1);
    expect(heard.slice(0, 2)).toEqual(['failed', 'ran']);
  });

  it('tells onRun after each run whether this instance did the work (null: another held the lease)', async () => {
    let runs = 0;
    const heard: string[] = [];
    const job = everyInterval(5, () => Promise.resolve(++runs % 2 === 0 ? null : runs), undefined, (result) => heard.push(result));
    job.start(() => undefined);
    await new Promise((r) => setTimeout(r, 40));
    await job.stop();
    expect(heard.length).toBe(runs);
    expect(heard.slice(0, 4)).toEqual(['ran', 'skipped', 'ran', 'skipped']);
  });
});
