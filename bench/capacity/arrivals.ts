/**
 * The open-model scheduler the capacity benchmarks play their loads with: each operation arrives
 * at its own rate (requests per second, which may change with time) whether or not earlier ones
 * have been answered, as people's clients do, so a slow server meets more work, not less.
 * (autocannon, used by the other benchmarks, is closed-loop: a fixed number of connections each
 * waiting for its answer, which hides a server's queueing; k6 is not on the npm registry this
 * project installs from.) Answers are checked by the operation itself; what it throws is an
 * error, counted with its message, never guessed from a status alone.
 */
import { performance } from 'node:perf_hooks';

/** What one arrival came to. `shed`: refused on purpose with 429 and Retry-After (not an error). */
export interface Outcome {
  shed?: boolean;
}

export interface Arrivals {
  name: string;
  /** Arrivals per second at `seconds` since the start. */
  rate: (seconds: number) => number;
  /** Evenly spaced, as k6's arrival-rate executors, or a Poisson process, as independent people. */
  spacing?: 'even' | 'poisson';
  run: () => Promise<Outcome | void>;
}

export interface OperationFigures {
  name: string;
  count: number;
  errors: number;
  shed: number;
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export class Recorder {
  private readonly latencies = new Map<string, number[]>();
  private readonly errorCounts = new Map<string, number>();
  private readonly shedCounts = new Map<string, number>();
  /** The first few distinct error messages, so a failing run says why. */
  readonly problems = new Map<string, number>();

  record(name: string, ms: number, outcome: 'ok' | 'shed' | Error): void {
    if (outcome === 'ok') this.list(name).push(ms);
    else if (outcome === 'shed') this.shedCounts.set(name, (this.shedCounts.get(name) ?? 0) + 1);
    else {
      this.list(name);
      this.errorCounts.set(name, (this.errorCounts.get(name) ?? 0) + 1);
      const key = `${name}: ${outcome.message.slice(0, 200)}`;
      if (this.problems.size < 20 || this.problems.has(key)) this.problems.set(key, (this.problems.get(key) ?? 0) + 1);
    }
  }

  private list(name: string): number[] {
    let list = this.latencies.get(name);
    if (!list) this.latencies.set(name, (list = []));
    return list;
  }

  get errors(): number {
    let total = 0;
    for (const n of this.errorCounts.values()) total += n;
    return total;
  }

  figures(): OperationFigures[] {
    return [...this.latencies.keys()].sort().map((name) => {
      const sorted = [...(this.latencies.get(name) ?? [])].sort((a, b) => a - b);
      const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? NaN;
      const errors = this.errorCounts.get(name) ?? 0;
      const shed = this.shedCounts.get(name) ?? 0;
      return {
        name,
        count: sorted.length + errors + shed,
        errors,
        shed,
        mean: sorted.reduce((a, b) => a + b, 0) / Math.max(1, sorted.length),
        p50: at(0.5),
        p95: at(0.95),
        p99: at(0.99),
        max: sorted.at(-1) ?? NaN,
      };
    });
  }
}

export interface PlayResult {
  recorder: Recorder;
  /** The generator's own worst delay between when an arrival was due and when it was sent, in ms. */
  worstLag: number;
  seconds: number;
}

/**
 * Plays `arrivals` for `seconds`. An arrival finding `maxInFlight` requests already waiting is
 * counted as an error ("too many in flight"): past that point the server has stopped keeping up.
 */
export async function play(arrivals: Arrivals[], seconds: number, opts: { maxInFlight?: number; recorder?: Recorder } = {}): Promise<PlayResult> {
  const recorder = opts.recorder ?? new Recorder();
  const maxInFlight = opts.maxInFlight ?? 2000;
  const start = performance.now();
  const endAt = seconds * 1000;
  // Evenly spaced arrivals begin at once, as k6's arrival-rate executors start their first iteration at 0.
  const next = arrivals.map((a) => (a.spacing === 'even' && a.rate(0) > 0 ? 0 : gap(a, 0)));
  const pending = new Set<Promise<void>>();
  let worstLag = 0;

  const fire = (a: Arrivals) => {
    if (pending.size >= maxInFlight) {
      recorder.record(a.name, 0, new Error(`not sent: ${maxInFlight} requests already in flight`));
      return;
    }
    const sent = performance.now();
    const done = a.run().then(
      (outcome) => recorder.record(a.name, performance.now() - sent, outcome?.shed ? 'shed' : 'ok'),
      (error: unknown) => recorder.record(a.name, performance.now() - sent, error instanceof Error ? error : new Error(String(error))),
    );
    pending.add(done);
    void done.finally(() => pending.delete(done));
  };

  for (;;) {
    const now = performance.now() - start;
    if (now >= endAt) break;
    let soonest = endAt;
    for (let i = 0; i < arrivals.length; i++) {
      const a = arrivals[i]!;
      let due = next[i]!;
      while (due <= now) {
        worstLag = Math.max(worstLag, now - due);
        fire(a);
        due += gap(a, due);
      }
      next[i] = due;
      soonest = Math.min(soonest, due);
    }
    await new Promise((resolve) => setTimeout(resolve, Math.max(1, soonest - (performance.now() - start))));
  }
  await Promise.all(pending);
  return { recorder, worstLag, seconds };
}

/** Milliseconds to the next arrival of `a` after `at` ms; a rate of zero looks again in 100 ms. */
function gap(a: Arrivals, at: number): number {
  const rate = a.rate(at / 1000);
  if (!(rate > 0)) return 100;
  const mean = 1000 / rate;
  return a.spacing === 'even' ? mean : -Math.log(1 - Math.random()) * mean;
}

/** A k6-style stepwise-linear ramp: `stages` of [seconds, target rate], starting from `from`. */
export function ramp(from: number, stages: [number, number][]): (seconds: number) => number {
  return (t) => {
    let begin = 0;
    let rate = from;
    for (const [length, target] of stages) {
      if (t < begin + length) return rate + ((target - rate) * (t - begin)) / length;
      begin += length;
      rate = target;
    }
    return 0;
  };
}
