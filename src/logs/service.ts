import { notFound } from '../errors.ts';
import type { Database } from '../storage/index.ts';
import type { RequestLog, RequestLogEntry } from './entry.ts';
import { type LogListQuery, type LogPage, type LogStat, LogStore } from './store.ts';
import { DatabaseLogSink, type LogSink } from './sink.ts';
import { type LogWriterOptions, RequestLogWriter } from './writer.ts';

const DAY_MS = 86_400_000;

export interface RequestLogsOptions extends LogWriterOptions {
  /** Whether requests are recorded (CAIRN_REQUEST_LOGS); reading the log works either way. */
  enabled: boolean;
  /** Logs older than this many days are deleted, at start and every six hours; 0 keeps them. */
  keepDays: number;
  /** Where batches are written; by default through `db` (see sink.ts for the SQLite thread). */
  sink?: (store: LogStore) => LogSink;
}

/**
 * The request log (API contract §15): what the HTTP layer records through `record`, what `/api/logs`
 * reads, and the pruning of old entries. It lives in its own database (`registry.logs`), so logging
 * never competes with a data database's writer.
 */
export class RequestLogs {
  readonly store: LogStore;
  private writerInstance?: RequestLogWriter;

  constructor(
    db: Database,
    private readonly options: RequestLogsOptions,
  ) {
    this.store = new LogStore(db);
  }

  /** Made on first use, so that CLI commands, which record nothing, never start a log thread. */
  get writer(): RequestLogWriter {
    this.writerInstance ??= new RequestLogWriter(this.options.sink?.(this.store) ?? new DatabaseLogSink(this.store), this.options);
    return this.writerInstance;
  }

  get enabled(): boolean {
    return this.options.enabled;
  }

  /** Queues one finished request; never waits, never throws. */
  record(entry: RequestLogEntry): void {
    this.writer.push(entry);
  }

  list(query: LogListQuery): Promise<LogPage> {
    return this.store.list(query);
  }

  async get(id: string): Promise<RequestLog> {
    const log = await this.store.find(id);
    if (!log) throw notFound();
    return log;
  }

  stats(filter: unknown): Promise<LogStat[]> {
    return this.store.stats(filter);
  }

  /** Deletes entries older than the retention; returns how many. */
  async prune(now = Date.now()): Promise<number> {
    if (this.options.keepDays <= 0) return 0;
    return this.store.prune(now - this.options.keepDays * DAY_MS);
  }

  /** Prunes now (a server; CLI commands do not). Then the `__pbLogsCleanup__` system cron job prunes every six hours (jobs/system-crons.ts). */
  start(onError: (err: unknown) => void): void {
    if (this.options.keepDays <= 0) return;
    void this.prune().catch(onError);
  }

  /** Stops pruning and writes what is buffered; call before the log database closes. */
  async stop(): Promise<void> {
    await this.writerInstance?.close();
  }
}
