/**
 * The worker threads that run pb_hooks handlers: one worker per handler at a time, its `$app` calls
 * answered through shared memory (runtime/worker-entry.ts is the other side), a time limit that
 * replaces a worker past it, and the pool that keeps idle workers.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { ApiError } from '../errors.ts';
import { HookLoadError } from '../hooks/load-error.ts';
import { workerScript } from './runtime/bundle.ts';
import type { Reg } from './runtime/registrations.ts';
import { SyncCallHost } from './sync-host.ts';
/** What a file registered, as the worker reports it. */
export type PbRegistration = Omit<Reg, 'source'>;

/** A handler's `$app` calls, answered on the main thread; `end`, when given, is called once the handler has settled. */
export type Ops = ((op: string, args: any[]) => Promise<unknown>) & { end?: () => Promise<void> };

/** Where pb_hooks' log lines go (the server's logger, by level). */
export type PbLog = (level: string, msg: string, data: Record<string, unknown>) => void;

export interface Job {
  resolve(result: any): void;
  reject(err: unknown): void;
  ops: Ops;
}


/** Room for an answer to a handler's `$app` call in the worker's shared memory; larger ones go on its port. */
export const ANSWER_BYTES = 256 * 1024;

export class PbWorker {
  readonly worker: Worker;
  private readonly sync = new SyncCallHost(ANSWER_BYTES);
  private readonly port: MessagePort;
  job?: Job;
  dead = false;
  readonly ready: Promise<PbRegistration[]>;

  constructor(
    files: string[],
    dir: string,
    private readonly log: PbLog,
    private readonly onExit: (w: PbWorker) => void,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(workerScript(), {
      eval: true,
      workerData: { files, hooksDir: dir, shared: this.sync.shared, port: port2 },
      transferList: [port2],
      stdout: false,
      stderr: false,
    });
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (msg: any) => {
        switch (msg.type) {
          case 'loaded':
            resolve(msg.regs);
            return;
          case 'call':
            this.answer(msg.op, msg.args);
            return;
          case 'log':
            this.log(msg.level, msg.args[0], msg.args[1]);
            return;
          case 'done':
          case 'fail': {
            const job = this.job;
            this.job = undefined;
            if (!job) return;
            if (msg.type === 'done') job.resolve(msg.result);
            else job.reject(revive(msg.error));
          }
        }
      });
      this.worker.on('error', (err) => {
        reject(located(err, files));
        this.end(err);
      });
      this.worker.on('exit', () => this.end(new Error('the pb_hooks worker stopped')));
    });
  }

  private answer(op: string, args: any[]): void {
    if (this.dead) return;
    const job = this.job;
    this.sync.answer(this.port, job ? () => job.ops(op, args) : 'no handler is running');
  }

  private end(err: unknown): void {
    if (this.dead) return;
    this.dead = true;
    const job = this.job;
    this.job = undefined;
    job?.reject(err);
    this.onExit(this);
  }

  terminate(): void {
    this.end(new Error('terminated'));
    void this.worker.terminate();
  }
}

export function revive(e: { status?: number; message: string; data?: any; stack?: string }): Error {
  if (e.status) return new ApiError(e.status, e.message, e.data ?? {});
  const err = new Error(e.message);
  if (e.stack) err.stack = e.stack;
  return err;
}

/** A load error located in one of the files (the first stack frame naming it, or a syntax error's). */
export function located(err: unknown, files: string[]): HookLoadError {
  const reason = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  const stack = err instanceof Error ? (err.stack ?? '') : '';
  for (const file of files) {
    const m = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+)(?::(\\d+))?`).exec(stack);
    if (m) return new HookLoadError(reason, file, Number(m[1]), m[2] ? Number(m[2]) : undefined);
  }
  return new HookLoadError(reason, files.length === 1 ? files[0] : undefined);
}

/** The 503 of a handler that ran past the time limit. */
export function pbTimeout(): ApiError {
  return new ApiError(503, 'The request took too long to process (a hook ran past its time limit); nothing was saved.');
}

/**
 * Workers for one load of the files. Each runs one handler at a time; a handler whose `$app` call
 * runs other handlers (a save firing record hooks) gets another worker, so busy workers never wait
 * on each other. Idle workers beyond `keep` end.
 *
 * At most `keep` handlers run at once from outside (a request, a write, a cron tick); more wait in
 * line for a worker instead of each spawning a fresh one that evaluates every file again and ends
 * (50 concurrent requests to a one-line route fell to ~30 req/s and +100 MB that way). A handler
 * run from inside another's `$app` call never waits in that line: its caller holds a worker.
 */
/** Set while a worker's `$app` call is done on this thread: handlers it runs are nested. */
export const insideOps = new AsyncLocalStorage<true>();

export class PbPool {
  private readonly idle: PbWorker[] = [];
  private readonly all = new Set<PbWorker>();
  private closed = false;

  constructor(
    readonly files: string[],
    readonly dir: string,
    private readonly timeoutMs: number,
    private readonly log: PbLog,
    private readonly keep = Math.max(2, availableParallelism()),
  ) {}

  /** Handlers run from outside at this moment, and those waiting for one of them to end. */
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  private async slot(): Promise<() => void> {
    if (this.running >= this.keep) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    };
  }

  private spawn(): PbWorker {
    const w = new PbWorker(this.files, this.dir, this.log, (gone) => {
      this.all.delete(gone);
      const i = this.idle.indexOf(gone);
      if (i >= 0) this.idle.splice(i, 1);
    });
    this.all.add(w);
    return w;
  }

  /** Loads the files in a first worker: what they register, or the load error. */
  async start(): Promise<PbRegistration[]> {
    const w = this.spawn();
    try {
      const regs = await w.ready;
      this.idle.push(w);
      return regs;
    } catch (err) {
      w.terminate();
      throw err;
    }
  }

  /** Runs registration `index` with `payload`; its `$app` calls are done by `ops`. */
  async run(index: number, payload: unknown, ops: Ops): Promise<any> {
    if (this.closed) throw new ApiError(503, 'The server is stopping.');
    try {
      if (insideOps.getStore()) return await this.runNow(index, payload, ops);
      const release = await this.slot();
      try {
        return await this.runNow(index, payload, ops);
      } finally {
        release();
      }
    } finally {
      await ops.end?.();
    }
  }

  private async runNow(index: number, payload: unknown, ops: Ops): Promise<any> {
    if (this.closed) throw new ApiError(503, 'The server is stopping.');
    const w = this.idle.pop() ?? this.spawn();
    await w.ready;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        w.job = undefined;
        w.terminate();
        this.log('error', 'a pb_hooks handler ran past the time limit; its worker was replaced', { timeoutMs: this.timeoutMs, index });
        reject(pbTimeout());
      }, this.timeoutMs);
      w.job = {
        ops: (op, args) => insideOps.run(true, () => ops(op, args)),
        resolve: (result) => {
          clearTimeout(timer);
          if (!this.closed && this.idle.length < this.keep && !w.dead) this.idle.push(w);
          else w.terminate();
          resolve(result);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      w.worker.postMessage({ type: 'run', index, payload });
    });
  }

  get size(): number {
    return this.all.size;
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.all]) w.terminate();
  }
}

