import type { RequestLogEntry } from './entry.ts';
import type { LogSink } from './sink.ts';

export interface LogWriterOptions {
  /** Longest an entry waits in memory before it is written, in milliseconds. */
  flushMs?: number;
  /** Entries that trigger a write at once. */
  batchSize?: number;
  /** Most entries held in memory; beyond it new entries are dropped and counted. */
  maxBuffered?: number;
  /** Told when a batch could not be written (its entries are kept and written again later). */
  onError?: (err: unknown) => void;
  /** Longest wait between attempts at a batch that failed, in milliseconds. */
  maxRetryMs?: number;
  /** Attempts `close` makes at what is left before it drops it. */
  closeAttempts?: number;
}

/**
 * Writes request logs off the request path: `push` only appends to an array; a timer (or a full
 * batch) writes what has gathered in one transaction. The buffer is bounded: when the store falls
 * behind, new entries are dropped and counted (`dropped`) rather than held without limit, since a
 * log must never take the server's memory. A batch that fails to write (a database restarting, two
 * nodes' ids colliding) goes back to the front of the buffer and is written again after a backoff,
 * never dropped while it fits the buffer. One write runs at a time; `close` writes what is left.
 */
export class RequestLogWriter {
  private buffer: RequestLogEntry[] = [];
  private timer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private closed = false;
  /** Entries dropped because the buffer was full (or a batch still failed at close). */
  dropped = 0;
  /** Entries written so far. */
  written = 0;
  /** Told when a batch could not be written (it is retried). */
  onError?: (err: unknown) => void;
  /** Batches that failed and were put back to retry. */
  retried = 0;
  private failures = 0;
  private readonly maxRetryMs: number;
  private readonly closeAttempts: number;
  private readonly flushMs: number;
  private readonly batchSize: number;
  private readonly maxBuffered: number;

  constructor(
    private readonly sink: LogSink,
    options: LogWriterOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 200;
    this.batchSize = options.batchSize ?? 512;
    this.maxBuffered = options.maxBuffered ?? 20_000;
    this.onError = options.onError;
    this.maxRetryMs = options.maxRetryMs ?? 5000;
    this.closeAttempts = options.closeAttempts ?? 5;
  }

  push(entry: RequestLogEntry): void {
    if (this.closed) return;
    if (this.buffer.length >= this.maxBuffered) {
      this.dropped++;
      return;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= this.batchSize && !this.writing && this.failures === 0) void this.flush();
    else if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Writes everything buffered now (and waits for a write already under way). */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    while (this.writing) await this.writing;
    if (this.buffer.length === 0) return;
    const batch = this.buffer;
    this.buffer = [];
    let failed = false;
    this.writing = this.sink.write(batch).then(
      () => {
        this.written += batch.length;
        this.failures = 0;
      },
      (err: unknown) => {
        failed = true;
        this.failures++;
        this.retried++;
        // Back to the front, in order; what no longer fits the buffer is dropped and counted.
        const kept = batch.concat(this.buffer);
        if (kept.length > this.maxBuffered) this.dropped += kept.length - this.maxBuffered;
        this.buffer = kept.slice(0, this.maxBuffered);
        this.onError?.(err);
      },
    );
    try {
      await this.writing;
    } finally {
      this.writing = undefined;
    }
    if (this.closed) return;
    if (failed) {
      const wait = Math.min(this.maxRetryMs, this.flushMs * 2 ** (this.failures - 1));
      clearTimeout(this.timer);
      this.timer = setTimeout(() => void this.flush(), wait);
      this.timer.unref();
      return;
    }
    // Entries that came in while this batch was written wait for the timer, or go now if they fill one.
    if (this.buffer.length >= this.batchSize) await this.flush();
    else if (this.buffer.length > 0 && !this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Stops taking entries, writes those left and closes the sink. */
  async close(): Promise<void> {
    this.closed = true;
    for (let attempt = 1; attempt <= this.closeAttempts; attempt++) {
      await this.flush();
      if (this.buffer.length === 0) break;
      if (attempt < this.closeAttempts) await new Promise((r) => setTimeout(r, Math.min(this.maxRetryMs, this.flushMs * 2 ** (attempt - 1))));
    }
    clearTimeout(this.timer);
    this.dropped += this.buffer.length;
    this.buffer = [];
    await this.sink.close();
  }
}
