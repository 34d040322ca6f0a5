import { garbageCollector } from './cache-release.js';

/**
 * Gives back, once, the memory V8 grew while the server started (module code and schemas
 * compiled, the young generation grown, old-space garbage): a memory-reducing collection shortly
 * after the server listens. V8 would do the same on its own with its memory reducer, but on
 * Node 24 (V8 13.6) the reducer judges the start's allocation rate "high" for good while the
 * process idles and never runs (issue #43; docs/benchmarks.md, the lean section): the heap stays
 * at what the start left, about 10 MB more. `gc` with the `last-resort` flavor is the collection
 * the reducer would run (a full one that shrinks the young generation and compacts); like the
 * caches' release, it is cache-release.ts's `garbageCollector`. It holds the event loop while it runs, once (70–95 ms for the server at load 2.5,
 * more on a busier machine). V8 11 (Node 20) does not know the flavor and would run an ordinary collection that
 * gives nothing back, so it is not asked there: its own reducer runs 9–66 s after the start.
 */
export function giveBackStartMemory(afterMs = 1000): void {
  if (Number.parseInt(process.versions.v8, 10) < 12) return;
  setTimeout(() => {
    try {
      garbageCollector()?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
    } catch {
      // A V8 that refuses the options: its own reducer is all there is.
    }
  }, afterMs).unref();
}
