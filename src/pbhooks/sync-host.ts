/**
 * The main thread's side of the synchronous bridge to a pb_hooks or pb_migrations worker
 * (runtime/sync-call.ts is the worker's side): the worker posts a call and blocks on a shared flag;
 * the answer goes back as JSON text in shared memory, or on the worker's port when it does not fit.
 */
import type { MessagePort } from 'node:worker_threads';
import { ApiError } from '../errors.ts';

const encoder = new TextEncoder();

export class SyncCallHost {
  /** Handed to the worker: [0..8) the flag, then the answer's bytes. */
  readonly shared: SharedArrayBuffer;
  /** [0]: 1 once an answer is ready, [1]: its length in `answerBytes`, or -1 when it is on the port. */
  private readonly flag: Int32Array;
  private readonly answerBytes: Uint8Array;

  constructor(answerRoom: number) {
    this.shared = new SharedArrayBuffer(8 + answerRoom);
    this.flag = new Int32Array(this.shared, 0, 2);
    this.answerBytes = new Uint8Array(this.shared, 8);
  }

  /**
   * Answers one call with what `run` resolves to (or its error), then wakes the worker. The worker
   * parses the text once, in its own realm, and no message wakes its event loop (blocked on the flag).
   */
  answer(port: MessagePort, run: (() => Promise<unknown>) | string): void {
    const done = (reply: { value?: unknown; error?: unknown }) => {
      let text: string;
      try {
        text = JSON.stringify(reply);
      } catch (err) {
        text = JSON.stringify({ error: errorData(err) });
      }
      const { read, written } = encoder.encodeInto(text, this.answerBytes);
      if (read === text.length) Atomics.store(this.flag, 1, written);
      else {
        port.postMessage(text);
        Atomics.store(this.flag, 1, -1);
      }
      Atomics.store(this.flag, 0, 1);
      Atomics.notify(this.flag, 0);
    };
    if (typeof run === 'string') return done({ error: { message: run } });
    run().then(
      (value) => done({ value }),
      (err) => done({ error: errorData(err) }),
    );
  }
}

/** An error as it crosses to the worker: an API error keeps its status and data. */
export function errorData(err: unknown): Record<string, unknown> {
  if (err instanceof ApiError) return { status: err.status, message: err.message, data: err.data };
  return { message: err instanceof Error ? err.message : String(err) };
}
