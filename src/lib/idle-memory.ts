import { Session } from 'node:inspector';
import { performance } from 'node:perf_hooks';
import v8 from 'node:v8';

/** How often the process's activity and heap are looked at. */
const CHECK_MS = 5000;
/** Event-loop utilization below which an interval counts as idle (timers alone stay well under it). */
const IDLE_UTILIZATION = 0.02;
/** Consecutive idle intervals before memory is given back: a lull between bursts is left alone. */
const IDLE_CHECKS = 2;
/** Growth of V8's committed heap since the last release that makes another one worth its pause. */
const GROWTH_BYTES = 8 * 2 ** 20;

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
 * So when the event loop has been idle for IDLE_CHECKS intervals and the committed heap has grown
 * by GROWTH_BYTES since the last release, this sends V8 the embedder's low-memory notification
 * (`HeapProfiler.collectGarbage` of an in-process inspector session: no port is opened, nothing is
 * enabled), the documented way to ask it to give memory back: full GCs that shrink the young
 * generation and compact the old space. It pauses the loop once, 15–40 ms at these heap sizes, at
 * a moment nothing is being served; a request that arrives during it waits that long. While busy the
 * check costs one `eventLoopUtilization` and one `getHeapStatistics` every CHECK_MS.
 *
 * Returns the function that stops it. For the process that owns the server (`cairn serve`); an
 * application embedding Cairn decides for its own process.
 */
export function releaseMemoryWhenIdle(): () => void {
  let last = performance.eventLoopUtilization();
  let idleChecks = 0;
  let committedAfterRelease = 0;
  let releasing = false;
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const busy = performance.eventLoopUtilization(now, last).utilization >= IDLE_UTILIZATION;
    last = now;
    idleChecks = busy ? 0 : idleChecks + 1;
    if (releasing || idleChecks < IDLE_CHECKS) return;
    if (v8.getHeapStatistics().total_heap_size < committedAfterRelease + GROWTH_BYTES) return;
    releasing = true;
    const done = () => {
      releasing = false;
      idleChecks = 0;
      committedAfterRelease = v8.getHeapStatistics().total_heap_size;
    };
    try {
      const session = new Session();
      session.connect();
      session.post('HeapProfiler.collectGarbage', () => {
        // Disconnecting inside the session's own callback hangs the session: after it returns.
        setImmediate(() => session.disconnect());
        done();
      });
    } catch {
      // No inspector in this build of Node (or it refused): nothing to give back this way.
      clearInterval(timer);
    }
  }, CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
