/** Longest wait between two attempts, whatever the attempt count: a day. */
const MAX_DELAY_MS = 24 * 60 * 60 * 1000;

/** Exponential backoff: the delay before retry number `retry` (1 = the first retry) is `baseMs`
 * doubled `retry - 1` times, capped at a day. */
export function backoffDelay(baseMs: number, retry: number): number {
  return Math.min(MAX_DELAY_MS, baseMs * 2 ** Math.max(0, retry - 1));
}
