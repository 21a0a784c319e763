/**
 * One hook: handlers bound in order, run as a chain in which each handler's `e.next()` calls the
 * next one and the last `next()` calls the work itself (the finalizer), as PocketBase's
 * `tools/hook` does. A handler may change the event before `next()`, look at the outcome after it,
 * or return without calling it, which leaves the work undone. Domain-free: events are any object
 * with a writable `next`.
 */

export interface ChainEvent {
  next(): Promise<void>;
  /** The source of the handler running (its logs are named after it). */
  current?: string;
}

export type Handler<E> = (e: E) => unknown;

export interface Bound<E> {
  handler: Handler<E>;
  /** Collection names or ids the handler is limited to (lower-cased); undefined for every one. */
  tags?: ReadonlySet<string>;
  /** The same names as given, for display. */
  names?: readonly string[];
  /** The file that bound it, for logs and the hooks screen. */
  source: string;
}

const ofWork = new WeakSet<object>();

/** Whether `bound` applies to an event tagged with any of `tags`. */
export function matches(bound: Bound<unknown>, tags: readonly string[]): boolean {
  if (bound.tags === undefined) return true;
  for (const tag of tags) if (bound.tags.has(tag.toLowerCase())) return true;
  return false;
}

/**
 * Runs `handlers` around `finalizer`. Resolves once the first handler and the finalizer (when it was
 * reached) have settled, with whether the finalizer was reached. Each `next()` runs the rest of the
 * chain once, however often it is called; an error of a handler passes `onError` (the work's own
 * errors pass as they are).
 */
export async function runChain<E extends ChainEvent>(event: E, handlers: readonly Bound<E>[], finalizer: () => Promise<void>, onError?: (err: unknown, source: string) => unknown): Promise<boolean> {
  let finished: Promise<void> | undefined;
  const work = (): Promise<void> =>
    (finished ??= finalizer().catch((err: unknown) => {
      if (typeof err === 'object' && err !== null) ofWork.add(err);
      throw err;
    }));
  const from = async (index: number): Promise<void> => {
    const bound = handlers[index];
    let rest: Promise<void> | undefined;
    // While a handler runs, `e.next` is its own next; the caller's comes back when it is done (a
    // second call there must not run what a later handler chose not to).
    const previous = event.next;
    const caller = event.current;
    event.next = index + 1 === handlers.length ? work : () => (rest ??= from(index + 1));
    event.current = bound.source;
    try {
      await bound.handler(event);
    } catch (err) {
      throw onError && !(typeof err === 'object' && err !== null && ofWork.has(err)) ? onError(err, bound.source) : err;
    } finally {
      event.next = previous;
      event.current = caller;
    }
  };
  if (handlers.length === 0) await work();
  else await from(0);
  // A handler that called next() without awaiting it has not seen the work end: the chain has.
  if (finished) await finished;
  return finished !== undefined;
}
