import { notFound } from '../errors.ts';
import type { Database } from '../storage/index.ts';
import { LEVEL_ERROR, LEVEL_INFO, type RequestLog, type RequestLogEntry } from './entry.ts';
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
  /** The `logs` settings as last loaded (undefined: `enabled` and `keepDays` hold), read per request. */
  settings?: () => LogSettings | undefined;
}

/** PocketBase's `logs` settings section. */
export interface LogSettings {
  /** Days entries are kept; 0 records nothing. */
  maxDays: number;
  /** Entries below this level are not recorded (requests are info, 0, or error, 8). */
  minLevel: number;
  logIP: boolean;
  logAuthId: boolean;
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

  private get current(): LogSettings {
    // CAIRN_LOG_DAYS=0 keeps entries for ever: recorded, never pruned.
    return this.options.settings?.() ?? { maxDays: this.options.enabled ? this.options.keepDays || Infinity : 0, minLevel: 0, logIP: true, logAuthId: true };
  }

  /** Whether requests are recorded now: the saved `logs.maxDays` above 0, else CAIRN_REQUEST_LOGS. */
  get enabled(): boolean {
    return this.current.maxDays > 0;
  }

  /** Queues one finished request, as the `logs` settings in force want it; never waits, never throws. */
  record(entry: RequestLogEntry): void {
    const settings = this.current;
    if (settings.maxDays <= 0) return;
    if (settings.minLevel > (entry.status >= 400 ? LEVEL_ERROR : LEVEL_INFO)) return;
    if (!settings.logIP) entry = { ...entry, userIp: '', remoteIp: '' };
    if (!settings.logAuthId) entry = { ...entry, authId: '' };
    this.writer.push(entry);
  }

  private get keepDays(): number {
    const days = this.current.maxDays;
    return Number.isFinite(days) ? days : 0;
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
    const days = this.keepDays;
    if (days <= 0) return 0;
    return this.store.prune(now - days * DAY_MS);
  }

  /** Prunes now (a server; CLI commands do not). Then the `__pbLogsCleanup__` system cron job prunes every six hours (jobs/system-crons.ts). */
  start(onError: (err: unknown) => void): void {
    if (this.keepDays <= 0) return;
    void this.prune().catch(onError);
  }

  /** Stops pruning and writes what is buffered; call before the log database closes. */
  async stop(): Promise<void> {
    await this.writerInstance?.close();
  }
}
