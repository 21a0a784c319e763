import { fileURLToPath } from 'node:url';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { ApiError } from '../errors.ts';
import { bundleWorker } from '../pbhooks/runtime/bundle.ts';
import { SyncCallHost } from '../pbhooks/sync-host.ts';
import type { MigrationOps } from './host.ts';

/** Bytes of an answer passed in shared memory; a longer one goes through the port. */
const ANSWER_BYTES = 1 << 20;

let script: string | undefined;

/**
 * The worker's script: worker-entry.ts with the pb_hooks runtime's modules, bundled by esbuild at
 * first use (a few hundred milliseconds) and kept for the process.
 */
function workerScript(): string {
  if (script !== undefined) return script;
  const here = fileURLToPath(import.meta.url);
  script = bundleWorker(fileURLToPath(new URL(here.endsWith('.ts') ? './worker-entry.ts' : './worker-entry.js', import.meta.url)));
  return script;
}

export interface WorkerRun {
  source: string;
  path: string;
  dir: string;
  direction: 'up' | 'down';
}

type Log = (level: string, msg: string, data: Record<string, unknown>) => void;

/**
 * One worker thread running pb_migrations files one at a time (the runner runs them in order), kept
 * between files and ended when idle: a folder of hundreds of files starts it once.
 */
export class MigrationWorker {
  private worker?: Worker;
  private port?: MessagePort;
  private readonly sync = new SyncCallHost(ANSWER_BYTES);
  private ready?: Promise<void>;
  private job?: { ops: MigrationOps; resolve(result: { registered: boolean }): void; reject(err: unknown): void };
  private idle?: NodeJS.Timeout;

  constructor(
    private readonly log: Log,
    private readonly idleMs = 2000,
  ) {}

  private start(): Promise<void> {
    if (this.ready) return this.ready;
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    const worker = new Worker(workerScript(), { eval: true, workerData: { shared: this.sync.shared, port: port2 }, transferList: [port2], stdout: false, stderr: false });
    worker.unref();
    this.worker = worker;
    this.ready = new Promise((resolve, reject) => {
      worker.on('message', (msg: any) => {
        switch (msg.type) {
          case 'ready':
            resolve();
            return;
          case 'call':
            this.answer(msg.op, msg.args);
            return;
          case 'log':
            this.log(msg.level, msg.args[0], msg.args[1] ?? {});
            return;
          case 'done':
          case 'fail': {
            const job = this.job;
            this.job = undefined;
            if (msg.type === 'done') job?.resolve(msg.result);
            else job?.reject(revive(msg.error));
          }
        }
      });
      worker.on('error', (err) => {
        reject(err);
        this.end(err);
      });
      worker.on('exit', () => this.end(new Error('the pb_migrations worker stopped')));
    });
    return this.ready;
  }

  private end(err: unknown): void {
    const job = this.job;
    this.job = undefined;
    this.worker = undefined;
    this.ready = undefined;
    job?.reject(err);
  }

  /** Answers a call of the file in shared memory (JSON), or on the port when it is too long. */
  private answer(op: string, args: unknown[]): void {
    const job = this.job;
    this.sync.answer(this.port!, job ? async () => (await job.ops(op, args)) ?? null : 'no migration is running');
  }

  /** Runs one file one way; its `$app` calls are answered by `ops`. */
  async run(run: WorkerRun, ops: MigrationOps): Promise<{ registered: boolean }> {
    if (this.idle) clearTimeout(this.idle);
    await this.start();
    try {
      return await new Promise((resolve, reject) => {
        this.job = { ops, resolve, reject };
        this.worker!.postMessage({ type: 'run', ...run });
      });
    } finally {
      this.idle = setTimeout(() => this.close(), this.idleMs);
      this.idle.unref();
    }
  }

  close(): void {
    if (this.idle) clearTimeout(this.idle);
    const worker = this.worker;
    this.end(new Error('the pb_migrations worker was closed'));
    void worker?.terminate();
  }
}

/** The file's error on this side: its message, API status and data, and its stack (which names the file's line). */
function revive(e: { status?: number; message: string; data?: any; stack?: string; name?: string }): Error {
  const err = e.status ? new ApiError(e.status, e.message, e.data ?? {}) : new Error(e.message);
  if (e.name && e.name !== 'Error' && !e.status) err.name = e.name;
  if (e.stack) err.stack = e.stack;
  return err;
}
