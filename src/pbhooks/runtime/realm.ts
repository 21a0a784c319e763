/**
 * One runtime's core: the `node:vm` context the hook files run in, the synchronous channel to the
 * host (HostBridge) and the deferred `e.next()`. Every other module of the runtime is built on one
 * Realm, so two runtimes in one process (the main-thread try, a migration run) share no state.
 */
import vm from 'node:vm';
import { revive } from './errors.ts';

/**
 * What a runtime needs from its host, synchronously (PocketBase's goja calls are synchronous).
 *
 * `call(op, args)` answers an `$app` operation (`findById`, `create`, `sql`, `saveCollection`, …; the
 * list is the `ops` of src/pbhooks/ops.ts) with `{ value }` or `{ error: { status?, message, data? } }`,
 * either as an object or as its JSON text (the worker's channel has text already). Arguments are
 * plain JSON values.
 */
export interface HostBridge {
  call(op: string, args: unknown[]): string | { value?: unknown; error?: any };
  log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, data: Record<string, unknown>): void;
}

export interface Realm {
  readonly context: vm.Context;
  /** An `$app` operation answered by the host; its value as an object of the hooks' realm. */
  call(op: string, ...args: any[]): any;
  /**
   * An `e.next()` not done yet. A handler that does nothing after `e.next()` but return needs no
   * answer from it, so the write is left to the host once the handler has ended: one thread
   * crossing instead of three (docs/performance.md). Whatever needs the write's outcome first (an
   * `$app` call, a record read, a file written) runs it then, synchronously, through `settle()`.
   */
  deferredNext: null | (() => void);
  settle(): void;
  /** A host value as an object of the hooks' realm (so `instanceof Array` holds there). */
  inner(v: any): any;
  log: HostBridge['log'];
  /** The API generation (22 or 23) of the file whose handler runs now. */
  runningGen: number;
  /** For `sleep(ms)`: a blocking wait that nothing wakes. */
  readonly sleeper: Int32Array;
}

/** Values to hand to the host: records as their data (duck-typed `__data`), the rest through JSON (drops functions). */
export function plain(v: any): any {
  return v === undefined ? undefined : JSON.parse(JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && typeof x.__data === 'function' ? x.__data() : x)) ?? 'null');
}

export function createRealm(bridge: HostBridge, context: vm.Context = vm.createContext({})): Realm {
  const ctxJSON = vm.runInContext('JSON', context);
  const rt: Realm = {
    context,
    deferredNext: null,
    settle() {
      const run = rt.deferredNext;
      if (!run) return;
      rt.deferredNext = null;
      run();
    },
    call(op, ...args) {
      rt.settle();
      const answer = bridge.call(op, plain(args));
      const res = typeof answer === 'string' ? ctxJSON.parse(answer) : answer;
      if (res.error) throw revive(res.error);
      return typeof answer === 'string' ? res.value : rt.inner(res.value);
    },
    inner: (v) => (v === undefined ? undefined : ctxJSON.parse(JSON.stringify(v))),
    log: bridge.log,
    runningGen: 23,
    sleeper: new Int32Array(new SharedArrayBuffer(4)),
  };
  return rt;
}

/** PocketBase's `toString`: bytes or arrays of bytes as text, anything else as JSON. */
export function toStringOf(v: any): string {
  if (typeof v?.__read === 'function') return Buffer.from(v.__read()).toString();
  return typeof v === 'string' ? v : v instanceof Uint8Array || Array.isArray(v) ? Buffer.from(v as any).toString() : v === undefined || v === null ? '' : JSON.stringify(v);
}
