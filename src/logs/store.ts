import { pbDate } from '../lib/time.ts';
import { badRequest } from '../errors.ts';
import { filterProblem, pagination, param } from '../records/query-params.ts';
import { compileFilter, compileSort } from '../rules/index.ts';
import { type Database, join, raw, type SchemaStep, type Sql, sql } from '../storage/index.ts';
import { entryValues, ID_PER_MS, LogIds, logFromRow, type RequestLog, type RequestLogEntry, type RequestLogRow, ROW_COLUMNS } from './entry.ts';
import { logFieldResolver } from './resolver.ts';

/** The request log's table, in a database of its own (`registry.logs`), never a data database. */
export const requestLogsTableStep: SchemaStep = {
  id: 'logs.requests',
  async up(tx) {
    // One b-tree on SQLite (the id is the rowid): no other index, since each costs every request a
    // page write. Ids are time-ordered, so lists sort and pruning cuts by id.
    await tx.exec(`CREATE TABLE _request_logs (
      id ${tx.dialect.bigintPrimaryKey()} NOT NULL,
      created TEXT NOT NULL,
      level INTEGER NOT NULL,
      method TEXT NOT NULL,
      url TEXT NOT NULL,
      status INTEGER NOT NULL,
      exec_ms DOUBLE PRECISION NOT NULL,
      auth TEXT NOT NULL,
      auth_id TEXT NOT NULL,
      db_name TEXT NOT NULL,
      user_ip TEXT NOT NULL,
      remote_ip TEXT NOT NULL,
      user_agent TEXT NOT NULL,
      referer TEXT NOT NULL,
      error TEXT NOT NULL
    )`);
  },
};

/** The schema of the log database. */
export const logSteps: SchemaStep[] = [requestLogsTableStep];

const COLUMNS = ROW_COLUMNS.join(', ');
// Rows per INSERT: one statement for many rows costs less per row than a statement each, and 64 rows
// of 15 values stay far below every driver's parameter limit.
export const ROWS_PER_INSERT = 64;
const ROW_PLACEHOLDERS = `(${ROW_COLUMNS.map(() => '?').join(', ')})`;

/** The INSERT of `rows` log rows, values in ROW_COLUMNS order (the id first). */
export function insertSql(rows: number): string {
  return `INSERT INTO _request_logs (${COLUMNS}) VALUES ${Array.from({ length: rows }, () => ROW_PLACEHOLDERS).join(', ')}`;
}

export { entryValues };
const MAX_FILTER_LENGTH = 4096;

export interface LogListQuery {
  page?: unknown;
  perPage?: unknown;
  sort?: unknown;
  filter?: unknown;
  skipTotal?: unknown;
}

export interface LogPage {
  page: number;
  perPage: number;
  totalItems: number;
  totalPages: number;
  items: RequestLog[];
}

/** Hourly request counts, as PocketBase's `/api/logs/stats`. */
export interface LogStat {
  total: number;
  /** The hour's start, ISO 8601 UTC. */
  date: string;
}

const MAX_ID_ATTEMPTS = 8;

function isUniqueViolation(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  // PostgreSQL's unique_violation; SQLite's constraint error.
  return e?.code === '23505' || e?.code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || /UNIQUE constraint failed|duplicate key/.test(String(e?.message ?? ''));
}

/**
 * The request log's storage: batched inserts, the list/view/stats queries of `/api/logs`, pruning.
 * Portable SQL over whatever `Database` it is given (a SQLite file of its own, or a PostgreSQL schema).
 */
export class LogStore {
  constructor(
    private readonly db: Database,
    /** The writer's ids (a lane of its own by default). */
    private readonly ids = new LogIds(),
  ) {}

  /**
   * Writes entries in one transaction. Ids taken by another node's writer on the same database (two
   * nodes on one lane) roll the transaction back; it is written again on another lane.
   */
  async insert(entries: readonly RequestLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.insertOnce(entries);
      } catch (err) {
        if (!isUniqueViolation(err) || attempt >= MAX_ID_ATTEMPTS) throw err;
        this.ids.switchLane();
      }
    }
  }

  private async insertOnce(entries: readonly RequestLogEntry[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      for (let start = 0; start < entries.length; start += ROWS_PER_INSERT) {
        const chunk = entries.slice(start, start + ROWS_PER_INSERT);
        const params: unknown[] = [];
        for (const e of chunk) {
          const at = params.length;
          params.push(this.ids.next(e.time));
          entryValues(e, params);
          params[at + 1] = new Date(e.time).toISOString();
        }
        await tx.run(insertSql(chunk.length), params);
      }
    });
  }

  /** A page of logs in the list shape of API contract §4; `-created` unless `sort` says otherwise. */
  async list(query: LogListQuery): Promise<LogPage> {
    const { page, perPage } = pagination(query);
    const where = this.where(query.filter);
    let order: Sql[];
    try {
      // Log ids grow with time (ms × 1024 + n): they are the table's insertion order on every driver.
      order = compileSort(param(query.sort), logFieldResolver, this.db.dialect, '_request_logs', '_request_logs.id');
    } catch (err) {
      throw filterProblem(err, 'sort');
    }
    // Ids sort in creation order: newest first by default, and the tie-breaker of any other order.
    const q = sql`SELECT ${raw(COLUMNS)} FROM _request_logs${where} ORDER BY ${join([...order, sql`id DESC`], ', ')} LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`;
    const rows = await this.db.all<RequestLogRow>(q.text, q.params);
    const skipTotal = ['1', 'true'].includes(param(query.skipTotal).toLowerCase());
    let totalItems = -1;
    if (!skipTotal) {
      const count = sql`SELECT COUNT(*) AS n FROM _request_logs${where}`;
      totalItems = Number((await this.db.get<{ n: number }>(count.text, count.params))?.n ?? 0);
    }
    return { page, perPage, totalItems, totalPages: skipTotal ? -1 : Math.ceil(totalItems / perPage), items: rows.map(logFromRow) };
  }

  async find(id: string): Promise<RequestLog | undefined> {
    if (!/^\d{1,17}$/.test(id)) return undefined;
    const row = await this.db.get<RequestLogRow>(`SELECT ${COLUMNS} FROM _request_logs WHERE id = ?`, [Number(id)]);
    return row && logFromRow(row);
  }

  /** Requests per hour (hours without requests are left out), oldest first. */
  async stats(filter: unknown): Promise<LogStat[]> {
    const where = this.where(filter);
    // created is ISO 8601 text: its first 13 characters name the hour, in SQLite and PostgreSQL alike.
    const q = sql`SELECT SUBSTR(created, 1, 13) AS hour, COUNT(*) AS total FROM _request_logs${where} GROUP BY SUBSTR(created, 1, 13) ORDER BY hour`;
    const rows = await this.db.all<{ hour: string; total: number }>(q.text, q.params);
    // Written as PocketBase writes dates (API contract §23).
    return rows.map((r) => ({ total: Number(r.total), date: pbDate(`${r.hour}:00:00.000Z`) as string }));
  }

  /** Deletes logs written before `before` (ms since the epoch); returns how many. */
  async prune(before: number): Promise<number> {
    return (await this.db.run('DELETE FROM _request_logs WHERE id < ?', [before * ID_PER_MS])).changes;
  }

  private where(filter: unknown): Sql {
    const text = param(filter).trim();
    if (text === '') return sql``;
    if (text.length > MAX_FILTER_LENGTH) throw badRequest(`Invalid filter: longer than ${MAX_FILTER_LENGTH} characters.`);
    try {
      return sql` WHERE ${compileFilter(text, logFieldResolver, { dialect: this.db.dialect })}`;
    } catch (err) {
      throw filterProblem(err, 'filter');
    }
  }
}
