import type * as Inspector from 'node:inspector';
import { createRequire } from 'node:module';

/**
 * Gives back, once, the memory V8 grew while the server started (the young generation grown to
 * its maximum, old-space garbage): a memory-reducing collection a second after the server
 * listens. V8 runs the same collections on its own with its memory reducer, but only once it
 * judges the process idle, which the start's allocations delay by 9–66 s on Node 20 and forever
 * on Node 24 (issue #43; docs/benchmarks.md, "Idle memory"). About 10 MB stay taken until then.
 *
 * The collection is asked through the inspector protocol (`HeapProfiler.collectGarbage`, which
 * is V8's low-memory notification), in this process and without opening any port: it is the one
 * way to ask for a reducing collection that Node 20's V8 offers, and Node 24's does the same. It
 * holds the event loop once, for two collections (40–50 ms for the server on this machine).
 */
export function giveBackStartMemory(afterMs = 1000): void {
  setTimeout(() => {
    let session: Inspector.Session;
    try {
      // Loaded here: a Node built without the inspector refuses the module, and then V8's own
      // reducer is all there is.
      const { Session } = createRequire(import.meta.url)('node:inspector') as typeof Inspector;
      session = new Session();
      session.connect();
    } catch {
      return;
    }
    // Disconnected on the next turn, not in the callback: the answer comes from inside V8's
    // collection task, and disconnecting there leaves Node 20's event loop asleep for good.
    session.post('HeapProfiler.collectGarbage', () => setImmediate(() => session.disconnect()));
  }, afterMs).unref();
}
