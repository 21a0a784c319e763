import { createRequire } from 'node:module';
import { type BackgroundJob, hold, installJob, onThreadExit } from '../storage/sqlite/background.ts';
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

// The job in the SQLite background thread (storage/sqlite/background.ts). Ids and dates are made
// there as LogIds and LogStore make them, so the request path pays for neither.
//
// Its page cache is 1 MiB, not better-sqlite3's default of 16 MB: the connection only appends (one
// b-tree keyed by a growing id), so it rereads the few pages on the table's right edge and nothing
// else, while every page it writes stays cached until the cache is full. With the default, the
// cache filled to 16 MB of pages never read again within a minute of load (measured: the thread's
// malloc arena held 19 MB after the bench's main cases, 1.7 MB before).
const JOB = `
const Database = require(options.driver);
const db = new Database(options.file);
for (const p of ['journal_mode = WAL', 'synchronous = NORMAL', 'busy_timeout = 10000', 'cache_size = -1024']) db.pragma(p);
const many = db.prepare(options.many);
const one = db.prepare(options.one);
const width = options.width;
const perMs = options.idPerMs;
let lastMs = 0, seq = 0;
function row(values, k, params) {
  const ms = values[k * width];
  if (ms > lastMs) { lastMs = ms; seq = 0; } else if (++seq >= perMs) { lastMs++; seq = 0; }
  params.push(lastMs * perMs + seq, new Date(ms).toISOString());
  for (let c = 1; c < width; c++) params.push(values[k * width + c]);
}
const insert = db.transaction((values, rows) => {
  let r = 0;
  for (; r + options.perInsert <= rows; r += options.perInsert) {
    const params = [];
    for (let k = r; k < r + options.perInsert; k++) row(values, k, params);
    many.run(params);
  }
  for (; r < rows; r++) { const params = []; row(values, r, params); one.run(params); }
});
return (m) => {
  if (m.close) { db.close(); reply({ closed: true }); return; }
  try { insert(m.values, m.rows); reply({ done: m.n }); }
  catch (err) { reply({ done: m.n, error: String(err && err.message || err) }); }
};
`;

/**
 * A SQLite log database written from the SQLite background thread with its own connection: inserting
 * a row costs a few microseconds (two b-trees), which on the event loop would be a sizeable share of
 * a fast request. The request path only builds the entry; a batch crosses to the thread as one flat
 * array.
 */
export class SqliteThreadLogSink implements LogSink {
  private readonly pending = new Map<number, { resolve: () => void; reject: (err: Error) => void }>();
  private next = 0;
  private closed?: Promise<void>;
  private readonly offExit: () => void;

  private constructor(private readonly job: BackgroundJob) {
    job.onReply((m: { done?: number; error?: string; failed?: string; to?: { n?: number } }) => {
      if (m.failed !== undefined) {
        const err = new Error(`request log write failed: ${m.failed}`);
        const n = m.to?.n;
        if (n === undefined) return this.failAll(err);
        this.pending.get(n)?.reject(err);
        this.pending.delete(n);
        return;
      }
      if (m.done === undefined) return;
      const waiter = this.pending.get(m.done);
      this.pending.delete(m.done);
      if (m.error !== undefined) waiter?.reject(new Error(`request log write failed: ${m.error}`));
      else waiter?.resolve();
    });
    this.offExit = onThreadExit(() => this.failAll(new Error('the request log thread stopped')));
  }

  /** The sink for `file`, or undefined when no worker thread can be had. */
  static open(file: string): SqliteThreadLogSink | undefined {
    const job = installJob(`request-log:${file}`, JOB, {
      driver: createRequire(import.meta.url).resolve('better-sqlite3'),
      file,
      many: insertSql(ROWS_PER_INSERT),
      one: insertSql(1),
      perInsert: ROWS_PER_INSERT,
      width: entryValues.width,
      idPerMs: ID_PER_MS,
    });
    return job && new SqliteThreadLogSink(job);
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
    // A write under way keeps the process alive (the thread does not): its entries must land.
    const release = hold();
    return new Promise<void>((resolve, reject) => {
      this.pending.set(n, { resolve, reject });
      this.job.send({ n, values, rows: entries.length });
    }).finally(release);
  }

  /** Closes the thread's connection to the log (after the writes sent before). */
  close(): Promise<void> {
    this.closed ??= new Promise<void>((resolve) => {
      // Waited for: the unref'd thread must keep the process alive until the connection is closed.
      const release = hold();
      const finish = () => {
        off();
        offExit();
        this.offExit();
        release();
        resolve();
      };
      const off = this.job.onReply((m: { closed?: boolean; failed?: string }) => {
        if (!m.closed && m.failed === undefined) return;
        this.job.uninstall();
        finish();
      });
      const offExit = onThreadExit(finish);
      this.job.send({ close: true });
    });
    return this.closed;
  }
}
