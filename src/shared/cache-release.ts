import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A cache whose unused entries can be dropped (byte-lru.ts, dropUnused). */
export interface Releasable {
  /** Drops the entries no request has used since the previous call: the bytes they held. */
  dropUnused(): number;
}

/** Below this many bytes dropped in a round, no garbage collection is asked for. */
const COLLECT_AFTER_BYTES = 1024 * 1024;

/**
 * Gives back the memory of cache entries no request has used for a while (CACHE_IDLE_MINUTES).
 * The sync and Secrets Manager caches keep encoded answers for the next request (a 10,000-item
 * vault's items are about 17 MB); once nobody has asked for one for that long, holding it only
 * costs the machine memory, and the next request builds it again. Every interval, each cache
 * drops the entries not used since the previous round, so an entry goes between one and two
 * intervals after its last use.
 *
 * The dropped buffers are freed only when V8 collects them, and a process with nothing to do
 * may not collect for a long time; so when a round drops at least a megabyte, it runs a full
 * collection (fullCollection below). That holds the event loop while it runs, unlike most of
 * V8's own, which mark alongside it: 17 ms for the server after a 10,000-item vault's syncs
 * (docs/benchmarks.md, the lean section, tenth session), at most once an interval.
 */
export function createCacheRelease({
  intervalMs,
  caches,
  collect = fullCollection,
}: {
  /** 0: entries stay until the caches' byte budgets push them out. */
  intervalMs: number;
  caches: readonly Releasable[];
  collect?: () => void;
}) {
  let timer: NodeJS.Timeout | undefined;
  const release = {
    /** One round: the bytes dropped. */
    releaseOnce(): number {
      const dropped = caches.reduce((sum, cache) => sum + cache.dropUnused(), 0);
      if (dropped >= COLLECT_AFTER_BYTES) collect();
      return dropped;
    },
    start() {
      if (intervalMs <= 0 || timer) return;
      timer = setInterval(() => release.releaseOnce(), intervalMs);
      timer.unref();
    },
    stop() {
      clearInterval(timer);
      timer = undefined;
    },
  };
  return release;
}

/** V8's `gc`: a full collection. */
type GarbageCollector = () => void;

let collector: GarbageCollector | null | undefined;

/**
 * V8's `gc` function, or null where Node refuses it. Node offers it only as `gc`, which V8 puts
 * in a context's globals when its `expose-gc` flag is set: set at run time, it takes effect in
 * contexts made after, so the function comes from a new one, made on the first call (not at
 * start: a context costs memory). Whatever way the process was started (`npm start`, the
 * `strongroom` program, a fleet), no flag is needed.
 */
function garbageCollector(): GarbageCollector | null {
  if (collector === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      collector = runInNewContext('gc') as GarbageCollector;
    } catch {
      collector = null;
    }
  }
  return collector;
}

/** A full garbage collection. If a later Node refuses, rounds still drop their entries and V8 frees them at its next collection. */
function fullCollection(): void {
  garbageCollector()?.();
}
