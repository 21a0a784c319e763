/**
 * Whether the delivery worker may start attempts now. Deliveries run on the event loop that serves
 * requests, and each costs about what serving a small request costs; while the loop is saturated,
 * starting them would take that throughput from the requests. So while it is, new attempts wait
 * (their events stay pending in the outbox, in order), except those of events that have waited
 * `maxDeferMs` already: under lasting load events still go, that much later, at the rate they come.
 *
 * Fed one event loop utilization sample per window (`PACE_WINDOW_MS`). Deferral starts when a window
 * is busier than BUSY and ends when one is calmer than CALM. A busy window may be the worker's own
 * doing (draining a backlog flat out): after deferral ends, for HOLD_WINDOWS windows a busy window
 * counts only if new events were written in it, so a drain pauses for one window in HOLD_WINDOWS + 1
 * to look at the load without it, while requests writing events again are seen at once (a drain
 * would otherwise run flat out into the start of the next burst).
 */
// Short, because a burst's first window goes by before deferral starts, delivering at full speed into
// it: at 100 ms that was about 5 % of the events of one-second bursts, and as much of their throughput.
export const PACE_WINDOW_MS = 25;
const BUSY = 0.9;
const CALM = 0.75;
/** One second of windows. */
export const HOLD_WINDOWS = 1000 / PACE_WINDOW_MS;

/** What the delivery worker asks of a pacer (tests give it one that is always busy). */
export interface Pacer {
  readonly isDeferring: boolean;
  sample(utilization: number, written?: number): boolean;
  mayStart(waitedMs: number): boolean;
}

export class DeliveryPacer implements Pacer {
  private deferring = false;
  private hold = 0;

  constructor(readonly maxDeferMs: number) {}

  /** Whether new attempts of events that have not waited `maxDeferMs` wait for now. */
  get isDeferring(): boolean {
    return this.deferring;
  }

  /** One window's event loop utilization (0 to 1) and how many events were written in it. Returns
   * true when deferral has just ended. */
  sample(utilization: number, written = 0): boolean {
    if (this.deferring) {
      if (utilization >= CALM) return false;
      this.deferring = false;
      this.hold = HOLD_WINDOWS;
      return true;
    }
    const judged = this.hold === 0 || written > 0;
    if (this.hold > 0) this.hold--;
    if (judged && utilization >= BUSY && this.maxDeferMs > 0) this.deferring = true;
    return false;
  }

  /** Whether an attempt of an event due `waitedMs` ago may start now. */
  mayStart(waitedMs: number): boolean {
    return !this.deferring || waitedMs >= this.maxDeferMs;
  }
}
