import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

/** Event-loop utilization below which an interval counts as idle (timers alone stay well under it). */
const IDLE_UTILIZATION = 0.02;

export interface IdleMemoryOptions {
  /** How often the process's activity and heap are looked at (default 5 s). */
  checkMs?: number;
  /** Consecutive idle checks before memory is given back (default 2): a lull between bursts is left alone. */
  idleChecks?: number;
  /** Growth of V8's committed heap since the last release that makes another one worth its pause (default 8 MB). */
  growthBytes?: number;
  /** Told after each release: V8's committed heap before and after, in bytes. */
  onRelease?: (release: { before: number; after: number }) => void;
}

/**
 * Gives V8's memory back once the process has gone idle after load, which V8 does not do by itself.
 *
 * Under load the young generation grows to its maximum (2 × 16 MB here) and the old space fills with
 * garbage no major GC has yet needed to collect: measured after the bench's main cases, 32 MB of
 * young generation and 40–57 MB of old space holding 15 MB alive. V8 shrinks both only in a GC, and
 * an idle server allocates too little to cause one. Its memory reducer, which exists for this, is
 * armed only by a major GC that finds the old generation 10 % (and 10 MB) above its size at the
 * reducer's last run; measured, it did not run in the 30–60 s of idling after the load, and the
 * memory stayed committed and resident (it does run after start, some 20 s in).
 *
 * So when the event loop has been idle for two checks (10 s) and the committed heap has grown by
 * 8 MB since the last release, this asks V8 to collect all it can (`HeapProfiler.collectGarbage`
 * of an in-process inspector session, what DevTools' "collect garbage" button sends: no port is
 * opened, no domain enabled). V8 runs it as it runs its low-memory notification, memory-reducing
 * full GCs, which shrink the young generation and compact the old space (measured: 32 → 1 MB and
 * 47 → 16 MB). This is a GC requested by hand, and the only one in Cairn. It pauses the loop once, 15–40 ms at these heap sizes, at
 * a moment nothing is being served; a request that arrives during it waits that long. While busy the
 * check costs one `eventLoopUtilization` and one `getHeapStatistics` every 5 s.
 *
 * Returns the function that stops it. For the process that owns the server (`cairn serve`); an
 * application embedding Cairn decides for its own process.
 */
export function releaseMemoryWhenIdle(options: IdleMemoryOptions = {}): () => void {
  const { checkMs = 5000, idleChecks: idleNeeded = 2, growthBytes = 8 * 2 ** 20, onRelease } = options;
  let last = performance.eventLoopUtilization();
  let idleChecks = 0;
  // Measured from now: what start-up grew, V8's memory reducer gives back by itself some 20 s in
  // (and releasing it here left the idle process 3–6 MB larger 30 s after start, 83–87 against 81 MB).
  let committedAfterRelease = v8.getHeapStatistics().total_heap_size;
  let releasing = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization >= IDLE_UTILIZATION;
    last = now;
    idleChecks = busy ? 0 : idleChecks + 1;
    if (releasing || idleChecks < idleNeeded) return;
    const before = v8.getHeapStatistics().total_heap_size;
    if (before < committedAfterRelease + growthBytes) return;
    releasing = true;
    const done = () => {
      releasing = false;
      idleChecks = 0;
      committedAfterRelease = v8.getHeapStatistics().total_heap_size;
      onRelease?.({ before, after: committedAfterRelease });
    };
    // Imported when first needed: a Node built without the inspector refuses the import (it is then
    // never tried again), and a process that never idles after load never loads it.
    import('node:inspector')
      .then(({ Session }) => {
        const session = new Session();
        session.connect();
        session.post('HeapProfiler.collectGarbage', () => {
          // Disconnecting inside the session's own callback hangs the session: after it returns.
          setImmediate(() => session.disconnect());
          done();
        });
      })
      // No inspector in this build of Node, or it refused the session: nothing to give back this way.
      .catch(() => clearInterval(timer));
  }, checkMs);
  timer.unref();
  return () => clearInterval(timer);
}
