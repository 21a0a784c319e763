import type { RequestLogEntry } from './entry.ts';
import type { LogSink } from './sink.ts';

export interface LogWriterOptions {
  /** Longest an entry waits in memory before it is written, in milliseconds. */
  flushMs?: number;
  /** Entries that trigger a write at once. */
  batchSize?: number;
  /** Most entries held in memory; beyond it new entries are dropped and counted. */
  maxBuffered?: number;
  /** Told when a batch could not be written (the entries are dropped, not retried). */
  onError?: (err: unknown) => void;
}

/**
 * Writes request logs off the request path: `push` only appends to an array; a timer (or a full
 * batch) writes what has gathered in one transaction. The buffer is bounded: when the store falls
 * behind, new entries are dropped and counted (`dropped`) rather than held without limit, since a
 * log must never take the server's memory. One write runs at a time; `close` writes what is left.
 */
export class RequestLogWriter {
  private buffer: RequestLogEntry[] = [];
  private timer?: NodeJS.Timeout;
  private writing?: Promise<void>;
  private closed = false;
  /** Entries dropped because the buffer was full (or a batch failed to write). */
  dropped = 0;
  /** Entries written so far. */
  written = 0;
  /** Told when a batch could not be written (its entries are dropped). */
  onError?: (err: unknown) => void;
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
  }

  push(entry: RequestLogEntry): void {
    if (this.closed) return;
    if (this.buffer.length >= this.maxBuffered) {
      this.dropped++;
      return;
    }
    this.buffer.push(entry);
    if (this.buffer.length >= this.batchSize && !this.writing) void this.flush();
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
    this.writing = this.sink.write(batch).then(
      () => {
        this.written += batch.length;
      },
      (err: unknown) => {
        this.dropped += batch.length;
        this.onError?.(err);
      },
    );
    try {
      await this.writing;
    } finally {
      this.writing = undefined;
    }
    // Entries that came in while this batch was written wait for the timer, or go now if they fill one.
    if (this.buffer.length >= this.batchSize) await this.flush();
    else if (this.buffer.length > 0 && !this.timer && !this.closed) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref();
    }
  }

  /** Stops taking entries, writes those left and closes the sink. */
  async close(): Promise<void> {
    this.closed = true;
    await this.flush();
    await this.sink.close();
  }
}
