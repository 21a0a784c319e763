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

/** Marks an error as the work's own (the chain's finalizer), which handlers pass on as it is. */
export function markWorkError(err: unknown): void {
  if (typeof err === 'object' && err !== null) ofWork.add(err);
}

const RESOLVED = Promise.resolve();

function isThenable(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Runs `handlers` around `finalizer`. Resolves once the first handler and the finalizer (when it was
 * reached) have settled; the caller's finalizer knows whether it ran. Each `next()` runs the rest of
 * the chain once, however often it is called; an error of a handler passes `onError`. The
 * finalizer's own errors pass as they are when it marks them (`markWorkError`). Written with plain
 * promises rather than async functions, one `then` per handler: every write of a hooked collection
 * pays for each promise.
 */
export function runChain<E extends ChainEvent>(event: E, handlers: readonly Bound<E>[], finalizer: () => Promise<void>, onError?: (err: unknown, source: string) => unknown): Promise<void> {
  let finished: Promise<void> | undefined;
  const work = (): Promise<void> => (finished ??= finalizer());
  if (handlers.length === 0) return work();
  const from = (index: number): Promise<void> => {
    const bound = handlers[index];
    let rest: Promise<void> | undefined;
    // While a handler runs, `e.next` is its own next; the caller's comes back when it is done (a
    // second call there must not run what a later handler chose not to).
    const previous = event.next;
    const caller = event.current;
    event.next = index + 1 === handlers.length ? work : () => (rest ??= from(index + 1));
    event.current = bound.source;
    const done = (): Promise<void> | undefined => {
      event.next = previous;
      event.current = caller;
      // A handler that called next() without awaiting it has not seen the work end: the chain has.
      return index === 0 ? finished : undefined;
    };
    const fail = (err: unknown): never => {
      done();
      throw onError && !(typeof err === 'object' && err !== null && ofWork.has(err)) ? onError(err, bound.source) : err;
    };
    let result: unknown;
    try {
      result = bound.handler(event);
    } catch (err) {
      return Promise.reject(fail(err));
    }
    if (!isThenable(result)) return done() ?? RESOLVED;
    return Promise.resolve(result).then(done, fail) as Promise<void>;
  };
  return from(0);
}
