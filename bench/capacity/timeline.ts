/**
 * When each answer came, for the restart benchmarks: the Recorder (arrivals.ts) keeps latencies
 * per operation for a whole run; a restart needs them by time, to see the latency fall back to
 * its level before. `timed` wraps the model's arrivals without changing them.
 */
import type { Arrivals } from './arrivals.js';

export interface Sample {
  /** When the request was sent, in ms since the timeline's origin. */
  at: number;
  name: string;
  ms: number;
  ok: boolean;
}

export class Timeline {
  readonly samples: Sample[] = [];
  readonly origin = performance.now();

  now(): number {
    return performance.now() - this.origin;
  }

  /** `arrivals` whose every answer (shed ones aside) is also noted here, with when it was sent. */
  timed(arrivals: Arrivals[]): Arrivals[] {
    return arrivals.map((a) => ({
      ...a,
      run: async () => {
        const sent = performance.now();
        try {
          const outcome = await a.run();
          if (!outcome?.shed) this.samples.push({ at: sent - this.origin, name: a.name, ms: performance.now() - sent, ok: true });
          return outcome;
        } catch (error) {
          this.samples.push({ at: sent - this.origin, name: a.name, ms: performance.now() - sent, ok: false });
          throw error;
        }
      },
    }));
  }

  /** The answers sent in [from, to) ms, of the operation `name` when given. */
  between(from: number, to: number, name?: string): Sample[] {
    return this.samples.filter((s) => s.at >= from && s.at < to && (!name || s.name === name));
  }
}

export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

export interface Window {
  start: number;
  count: number;
  errors: number;
  p50: number;
  p95: number;
}

/** The answers of [from, to) in windows of `width` ms: count, errors and the latency of the good ones. */
export function windows(samples: readonly Sample[], from: number, to: number, width: number): Window[] {
  const out: Window[] = [];
  for (let start = from; start < to; start += width) {
    const inside = samples.filter((s) => s.at >= start && s.at < start + width);
    const good = inside.filter((s) => s.ok).map((s) => s.ms);
    out.push({ start, count: inside.length, errors: inside.length - good.length, p50: quantile(good, 0.5), p95: quantile(good, 0.95) });
  }
  return out;
}

export interface Recovery {
  /** The 90th percentile of the 1-second windows' p95 before the restart: the usual band. */
  band: number;
  /** The p95 of all answers before the restart. */
  before: number;
  /** ms from the restart's start to the start of the first 1-second window, after the server answered again, from which three in a row are within the band with no errors. */
  back: number;
}

/**
 * How long the p95 took to come back into its band: the windows before `restartAt` (from
 * `since`) give the band; from `readyAt` on, the first of three windows in a row within it.
 */
export function recovery(samples: readonly Sample[], since: number, restartAt: number, readyAt: number, until: number): Recovery {
  const width = 1000;
  const before = windows(samples, since, restartAt, width).filter((w) => w.count > 0);
  const band = quantile(before.map((w) => w.p95), 0.9);
  const after = windows(samples, Math.floor(readyAt / width) * width, until, width);
  let back = NaN;
  for (let i = 0; i + 2 < after.length; i++) {
    const run = after.slice(i, i + 3);
    if (run.every((w) => w.count > 0 && w.errors === 0 && w.p95 <= band)) {
      back = after[i]!.start - restartAt;
      break;
    }
  }
  return { band, before: quantile(samples.filter((s) => s.ok && s.at >= since && s.at < restartAt).map((s) => s.ms), 0.95), back };
}
