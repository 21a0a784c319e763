/**
 * One API request as the request log keeps it. The API answers PocketBase v0.22's log shape
 * (`{id, created, updated, level, message, data}`, the request's details under `data`); the store keeps
 * one column per detail so filters and sorts compare columns.
 */

import { pbDate } from '../lib/time.ts';

/** Who made the request, as PocketBase names it (`apikey` is Cairn's own). */
export type CallerKind = 'guest' | 'admin' | 'authRecord' | 'apikey';

/** What the HTTP layer hands over for each finished request. */
export interface RequestLogEntry {
  /** When the answer was sent, milliseconds since the epoch (formatted when written). */
  time: number;
  method: string;
  /** Path and query string, with credentials already redacted. */
  url: string;
  status: number;
  /** Milliseconds from the request's arrival to its answer. */
  execTime: number;
  auth: CallerKind;
  /** The admin, record or API key id; '' for guests. */
  authId: string;
  /** The database the request worked on ('' for instance-wide routes). */
  database: string;
  /** The client's address (X-Forwarded-For when the proxy is trusted). */
  userIp: string;
  /** The address of the connection's other end (a proxy, when there is one). */
  remoteIp: string;
  userAgent: string;
  referer: string;
  /** The error message of a 4xx/5xx answer ('' otherwise). */
  error: string;
}

/** slog's levels, which PocketBase stores: requests that failed are errors. */
export const LEVEL_INFO = 0;
export const LEVEL_ERROR = 8;

/** A request log as `/api/logs` answers it (PocketBase v0.22). */
export interface RequestLog {
  id: string;
  created: string;
  updated: string;
  level: number;
  message: string;
  data: {
    type: 'request';
    method: string;
    url: string;
    status: number;
    execTime: number;
    auth: string;
    authId: string;
    database: string;
    userIp: string;
    remoteIp: string;
    userAgent: string;
    referer: string;
    error: string;
  };
}

/** The stored row: one lower-case column per detail (portable: PostgreSQL folds unquoted names). */
export interface RequestLogRow {
  id: number;
  created: string;
  level: number;
  method: string;
  url: string;
  status: number;
  exec_ms: number;
  auth: string;
  auth_id: string;
  db_name: string;
  user_ip: string;
  remote_ip: string;
  user_agent: string;
  referer: string;
  error: string;
}

/** The columns in insertion order, and the row of an entry in that order. */
export const ROW_COLUMNS = ['id', 'created', 'level', 'method', 'url', 'status', 'exec_ms', 'auth', 'auth_id', 'db_name', 'user_ip', 'remote_ip', 'user_agent', 'referer', 'error'] as const;

/**
 * Appends an entry's values for every column but `id`, in ROW_COLUMNS order, except that `created`
 * is still the time in milliseconds: whoever writes the row formats it and derives the id from it
 * (`LogIds`), so the request path pays for neither.
 */
export function entryValues(e: RequestLogEntry, out: unknown[]): void {
  out.push(e.time, e.status >= 400 ? LEVEL_ERROR : LEVEL_INFO, e.method, e.url, e.status, e.execTime, e.auth, e.authId, e.database, e.userIp, e.remoteIp, e.userAgent, e.referer, e.error);
}

/** How many values `entryValues` appends. */
entryValues.width = ROW_COLUMNS.length - 1;

export function logFromRow(r: RequestLogRow): RequestLog {
  return {
    id: String(r.id),
    // Stored ISO 8601 (it sorts and filters as such); answered as PocketBase writes dates (§23).
    created: pbDate(r.created) as string,
    updated: pbDate(r.created) as string,
    level: Number(r.level),
    message: `${r.method} ${r.url}`,
    data: {
      type: 'request',
      method: r.method,
      url: r.url,
      status: Number(r.status),
      execTime: Number(r.exec_ms),
      auth: r.auth,
      authId: r.auth_id,
      database: r.db_name,
      userIp: r.user_ip,
      remoteIp: r.remote_ip,
      userAgent: r.user_agent,
      referer: r.referer,
      error: r.error,
    },
  };
}

/** Ids per millisecond: a log id is `ms * ID_PER_MS + n`, so ids sort in time order and the id of a
 * time is known without a lookup (pruning deletes an id range). */
export const ID_PER_MS = 1024;

/** Lanes within a millisecond: the writers of several nodes on one database (PostgreSQL) each take a
 * lane, so their ids do not collide (a collision that still happens, two nodes on one lane, is retried
 * on another lane by `LogStore.insert`). */
export const ID_LANES = 16;

/** The ids of one writer: time-ordered, increasing even within a millisecond (borrowing the next
 * millisecond after ID_PER_MS / ID_LANES of them, rather than break the order). Each id is
 * `ms * ID_PER_MS + n * ID_LANES + lane`. */
export class LogIds {
  private lastMs = 0;
  private seq = 0;

  constructor(public lane = randomLane()) {}

  /** Moves to another lane (after a collision with another node's ids). */
  switchLane(): void {
    this.lane = (this.lane + 1 + Math.floor(Math.random() * (ID_LANES - 1))) % ID_LANES;
  }

  next(ms: number): number {
    if (ms > this.lastMs) {
      this.lastMs = ms;
      this.seq = 0;
    } else if (++this.seq >= ID_PER_MS / ID_LANES) {
      this.lastMs++;
      this.seq = 0;
    }
    return this.lastMs * ID_PER_MS + this.seq * ID_LANES + this.lane;
  }
}

function randomLane(): number {
  return Math.floor(Math.random() * ID_LANES);
}
