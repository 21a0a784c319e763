import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { ID_PER_MS, type RequestLogEntry } from './entry.ts';
import { entryValues, insertSql, type LogStore, ROWS_PER_INSERT } from './store.ts';

/** Where the request log's writer sends its batches. */
export interface LogSink {
  /** Writes the entries in one transaction. */
  write(entries: readonly RequestLogEntry[]): Promise<void>;
  close(): Promise<void>;
}

/** Through the `Database` interface (any driver): the store's own batched inserts. */
export class DatabaseLogSink implements LogSink {
  constructor(private readonly store: LogStore) {}

  write(entries: readonly RequestLogEntry[]): Promise<void> {
    return this.store.insert(entries);
  }

  async close(): Promise<void> {}
}

// Plain JavaScript, evaluated in the thread: it must not depend on the TypeScript loader. Ids and
// dates are made here as LogIds and LogStore make them, so the request path pays for neither.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file);
for (const p of ['journal_mode = WAL', 'synchronous = NORMAL', 'busy_timeout = 10000']) db.pragma(p);
const many = db.prepare(workerData.many);
const one = db.prepare(workerData.one);
const width = workerData.width;
const perMs = workerData.idPerMs;
let lastMs = 0, seq = 0;
function row(values, k, params) {
  const ms = values[k * width];
  if (ms > lastMs) { lastMs = ms; seq = 0; } else if (++seq >= perMs) { lastMs++; seq = 0; }
  params.push(lastMs * perMs + seq, new Date(ms).toISOString());
  for (let c = 1; c < width; c++) params.push(values[k * width + c]);
}
const insert = db.transaction((values, rows) => {
  let r = 0;
  for (; r + workerData.perInsert <= rows; r += workerData.perInsert) {
    const params = [];
    for (let k = r; k < r + workerData.perInsert; k++) row(values, k, params);
    many.run(params);
  }
  for (; r < rows; r++) { const params = []; row(values, r, params); one.run(params); }
});
parentPort.on('message', (m) => {
  if (m.close) { db.close(); parentPort.postMessage({ closed: true }); return; }
  try { insert(m.values, m.rows); parentPort.postMessage({ done: m.n }); }
  catch (err) { parentPort.postMessage({ done: m.n, error: String(err && err.message || err) }); }
});
`;

/**
 * A SQLite log database written from a worker thread with its own connection: inserting a row costs
 * a few microseconds (two b-trees), which on the event loop would be a sizeable share of a fast
 * request. The request path only builds the entry; a batch crosses to the thread as one flat array.
 */
export class SqliteThreadLogSink implements LogSink {
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private next = 0;
  private closed?: Promise<void>;

  constructor(file: string) {
    this.worker = new Worker(SOURCE, {
      eval: true,
      execArgv: [],
      workerData: {
        driver: createRequire(import.meta.url).resolve('better-sqlite3'),
        file,
        many: insertSql(ROWS_PER_INSERT),
        one: insertSql(1),
        perInsert: ROWS_PER_INSERT,
        width: entryValues.width,
        idPerMs: ID_PER_MS,
      },
    });
    // The server's lifetime is decided elsewhere: an idle log thread never keeps the process up.
    this.worker.unref();
    this.worker.on('message', (m: { done?: number; error?: string }) => {
      if (m.done === undefined) return;
      const waiter = this.pending.get(m.done);
      this.pending.delete(m.done);
      if (m.error !== undefined) waiter?.reject(new Error(`request log write failed: ${m.error}`));
      else waiter?.resolve();
    });
    this.worker.on('error', (err) => this.failAll(err));
    this.worker.on('exit', () => this.failAll(new Error('the request log thread stopped')));
  }

  private failAll(err: Error): void {
    for (const w of this.pending.values()) w.reject(err);
    this.pending.clear();
  }

  write(entries: readonly RequestLogEntry[]): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the request log is closed'));
    const values: unknown[] = [];
    for (const e of entries) entryValues(e, values);
    const n = ++this.next;
    return new Promise((resolve, reject) => {
      this.pending.set(n, { resolve, reject });
      this.worker.postMessage({ n, values, rows: entries.length });
    });
  }

  /** Closes the thread's connection (after the writes sent before) and stops the thread. */
  close(): Promise<void> {
    // Waited for now: the unref'd thread must keep the process alive until its connection is closed.
    this.worker.ref();
    this.closed ??= new Promise<void>((resolve) => {
      const onMessage = (m: { closed?: boolean }) => {
        if (!m.closed) return;
        this.worker.off('message', onMessage);
        void this.worker.terminate().then(() => resolve(), () => resolve());
      };
      this.worker.on('message', onMessage);
      this.worker.once('exit', () => resolve());
      this.worker.postMessage({ close: true });
    });
    return this.closed;
  }
}
