/**
 * The pb_hooks files evaluated once more, on the main thread, to run straight-line record handlers
 * there (straight.ts) without a round trip to a worker: on this kind of machine each wake-up of a
 * thread costs about as much CPU as a whole create (docs/performance.md).
 *
 * It is the workers' runtime (runtime/index.ts), given a bridge that answers on the spot: its `$app`
 * calls are answered here synchronously where that is possible (records by id or by filter on SQLite,
 * inside the write's transaction) and otherwise the try is given up. Giving up costs nothing but the try: a
 * straight-line handler has only read and changed its own copies when it reaches a call, and its
 * `e.next()` is deferred (runtime/realm.ts) so no write has started. The handler then runs in a worker
 * from the start, as it would have without this. Log lines of a try are kept until it succeeds.
 */
import type { PbLog, PbRegistration } from './pool.ts';
import { createPbRuntime, runForHost, type PbRuntime } from './runtime/index.ts';
import { isStraightLine } from './straight.ts';

/** Answers an `$app` call synchronously, `{ value }`, or undefined where it cannot (the try is given up). */
export type SyncOps = (op: string, args: any[]) => { value: unknown } | undefined;

/** Why a try run stops: an `$app` call that needs a worker. */
class GiveUp extends Error {}

/** Tries of a handler that never succeeded after which it is no longer tried here. */
const MAX_FRUITLESS_TRIES = 16;

export class MainRuntime {
  private readonly runtime: PbRuntime;
  private readonly regs: (PbRegistration & { source?: string })[];
  private readonly straight: boolean[];
  private readonly tries: number[] = [];
  private readonly successes: number[] = [];
  private ops?: SyncOps;
  private gaveUp = false;
  private logs: { level: string; msg: string; data: Record<string, unknown> }[] = [];

  private constructor(
    files: string[],
    dir: string,
    private readonly log: PbLog,
  ) {
    this.runtime = createPbRuntime({
      bridge: {
        call: (op, args) => this.answer(op, args),
        log: (level, msg, data) => this.logs.push({ level, msg, data }),
      },
      hooksDir: dir,
      sources: true,
    });
    for (const file of files) this.runtime.evaluate(file);
    this.regs = this.runtime.regs as (PbRegistration & { source?: string })[];
    this.straight = this.regs.map((r) => r.kind === 'event' && typeof r.source === 'string' && isStraightLine(r.source));
  }

  /**
   * The runtime on the main thread for files a worker loaded as `workerRegs`; undefined when no
   * handler could run here, or the files do not load here the same (they register by what they read).
   */
  static load(files: string[], dir: string, workerRegs: PbRegistration[], log: PbLog): MainRuntime | undefined {
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
    if (!this.tryable(index)) return undefined;
    this.tries[index] = (this.tries[index] ?? 0) + 1;
    this.ops = ops;
    this.gaveUp = false;
    this.logs = [];
    let outcome: { type: string; result?: unknown };
    try {
      outcome = runForHost(this.runtime, index, structuredClone(payload));
    } catch {
      return undefined;
    } finally {
      this.ops = undefined;
    }
    // A handler that threw runs again in a worker, which answers with its error as always.
    if (this.gaveUp || outcome.type !== 'done') return undefined;
    this.successes[index] = (this.successes[index] ?? 0) + 1;
    for (const { level, msg, data } of this.logs) this.log(level, msg, data);
    return outcome.result;
  }

  /** The host's answer to the runtime's call, or the try given up (thrown through the handler). */
  private answer(op: string, args: any[]): { value: unknown } {
    let answer: { value: unknown } | undefined;
    try {
      answer = this.ops?.(op, args);
    } catch {
      answer = undefined;
    }
    if (!answer) {
      this.gaveUp = true;
      throw new GiveUp(`${op} needs a worker`);
    }
    return answer;
  }
}
