/**
 * The pb_hooks files evaluated once more, on the main thread, to run straight-line record handlers
 * there (straight.ts) without a round trip to a worker: on this kind of machine each wake-up of a
 * thread costs about as much CPU as a whole create (docs/performance.md).
 *
 * It is the worker's own runtime (worker.ts), given a channel that answers on the spot: its `$app`
 * calls are answered here synchronously where that is possible (records by id or by filter on SQLite,
 * inside the write's transaction) and otherwise the try is given up. Giving up costs nothing but the try: a
 * straight-line handler has only read and changed its own copies when it reaches a call, and its
 * `e.next()` is deferred (worker.ts) so no write has started. The handler then runs in a worker
 * from the start, as it would have without this. Log lines of a try are kept until it succeeds.
 */
import { createRequire } from 'node:module';
import type { PbRegistration } from './index.ts';
import { ANSWER_BYTES, runtimeSource } from './source.ts';
import { isStraightLine } from './straight.ts';

/** Answers an `$app` call synchronously, `{ value }`, or undefined where it cannot (the try is given up). */
export type SyncOps = (op: string, args: any[]) => { value: unknown } | undefined;

type Log = (level: string, msg: string, data: Record<string, unknown>) => void;

/** Why a try run stops: an `$app` call that needs a worker. */
class GiveUp extends Error {}

/** Tries of a handler that never succeeded after which it is no longer tried here. */
const MAX_FRUITLESS_TRIES = 16;

const encoder = new TextEncoder();

export class MainRuntime {
  private listener?: (msg: unknown) => void;
  private regs: (PbRegistration & { source?: string })[] = [];
  private readonly shared = new SharedArrayBuffer(8 + ANSWER_BYTES);
  private readonly flag = new Int32Array(this.shared, 0, 2);
  private readonly answerBytes = new Uint8Array(this.shared, 8);
  private readonly straight: boolean[];
  private readonly tries: number[] = [];
  private readonly successes: number[] = [];
  private ops?: SyncOps;
  private outcome?: { type: string; result?: unknown };
  private gaveUp = false;
  private logs: { level: string; args: [string, Record<string, unknown>] }[] = [];

  private constructor(
    files: string[],
    dir: string,
    private readonly log: Log,
  ) {
    const threads = {
      parentPort: {
        postMessage: (msg: any) => this.receive(msg),
        on: (event: string, fn: (msg: unknown) => void) => {
          if (event === 'message') this.listener = fn;
        },
      },
      workerData: { files, hooksDir: dir, shared: this.shared, port: undefined, sources: true },
      receiveMessageOnPort: () => undefined,
    };
    const nodeRequire = createRequire(import.meta.url);
    const shimRequire = (id: string) => (id === 'node:worker_threads' ? threads : nodeRequire(id));
    // eslint-disable-next-line @typescript-eslint/no-implied-eval -- the worker's script, run here with the channel above
    new Function('require', runtimeSource())(shimRequire);
    this.straight = this.regs.map((r) => r.kind === 'event' && typeof r.source === 'string' && isStraightLine(r.source));
  }

  /**
   * The runtime on the main thread for files a worker loaded as `workerRegs`; undefined when no
   * handler could run here, or the files do not load here the same (they register by what they read).
   */
  static load(files: string[], dir: string, workerRegs: PbRegistration[], log: Log): MainRuntime | undefined {
    let runtime: MainRuntime;
    try {
      runtime = new MainRuntime(files, dir, log);
    } catch (err) {
      log('debug', 'pb_hooks: every handler runs in a worker (the files do not load on the main thread)', { err: err instanceof Error ? err.message : String(err) });
      return undefined;
    }
    const same =
      runtime.regs.length === workerRegs.length &&
      runtime.regs.every((r, i) => r.kind === workerRegs[i].kind && r.event === workerRegs[i].event && r.file === workerRegs[i].file && r.gen === workerRegs[i].gen);
    if (!same || !runtime.straight.some(Boolean)) return undefined;
    return runtime;
  }

  /** Whether registration `index` is worth a try here. */
  private tryable(index: number): boolean {
    return this.straight[index] === true && ((this.tries[index] ?? 0) < MAX_FRUITLESS_TRIES || (this.successes[index] ?? 0) > 0);
  }

  /**
   * Runs registration `index` here with a copy of `payload` (as a worker gets one: what the handler
   * does to it stays its own): its result, or undefined when the try was given up.
   */
  tryRun(index: number, payload: unknown, ops: SyncOps): any {
    if (!this.listener || !this.tryable(index)) return undefined;
    this.tries[index] = (this.tries[index] ?? 0) + 1;
    this.ops = ops;
    this.outcome = undefined;
    this.gaveUp = false;
    this.logs = [];
    try {
      this.listener({ type: 'run', index, payload: structuredClone(payload) });
    } catch {
      return undefined;
    } finally {
      this.ops = undefined;
    }
    // A handler that threw runs again in a worker, which answers with its error as always.
    const outcome = this.outcome as { type: string; result?: unknown } | undefined;
    if (this.gaveUp || outcome?.type !== 'done') return undefined;
    this.successes[index] = (this.successes[index] ?? 0) + 1;
    for (const { level, args } of this.logs) this.log(level, args[0], args[1]);
    return outcome.result;
  }

  private receive(msg: any): void {
    switch (msg.type) {
      case 'loaded':
        this.regs = msg.regs;
        return;
      case 'log':
        this.logs.push(msg);
        return;
      case 'done':
      case 'fail':
        this.outcome = msg;
        return;
      case 'call':
        this.answer(msg.op, msg.args);
    }
  }

  /** Puts the answer where the runtime's `call()` reads it (as PbWorker does), or gives the try up. */
  private answer(op: string, args: any[]): void {
    let answer: { value: unknown } | undefined;
    try {
      answer = this.ops?.(op, args);
    } catch {
      answer = undefined;
    }
    const text = answer && JSON.stringify({ value: answer.value });
    const written = text === undefined ? undefined : encoder.encodeInto(text, this.answerBytes);
    if (text === undefined || !written || written.read !== text.length) {
      this.gaveUp = true;
      throw new GiveUp(`${op} needs a worker`);
    }
    Atomics.store(this.flag, 1, written.written);
    Atomics.store(this.flag, 0, 1);
  }
}
