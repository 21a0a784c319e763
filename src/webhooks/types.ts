import type { Target } from './target.ts';

/**
 * The nouns of the webhooks room, shared by every layer: an outbox event as it is written
 * (`OutboxEntry`), read back (`OutboxRow`) and queued (`PendingRow`), the outcome of one attempt
 * (`Settlement`) and its log (`WebhookLog`). Nothing here does anything but `triggerBody`, which
 * both drivers' rows need to become a request body.
 */

export type EventSource = 'trigger' | 'cron' | 'workflow';
export type EventStatus = 'pending' | 'success' | 'failed';

export interface OutboxEntry {
  /** The event id: the body's `id`, the JWT's `evt` and the `webhook-id` header. */
  id: string;
  source: EventSource;
  /** Cron job or workflow name ('' for triggers). */
  name: string;
  /** Collection name for triggers, else ''. */
  collection: string;
  /** Trigger action, `cron` or `workflow`. */
  action: string;
  /** Events with the same key are delivered one at a time, in the order they were written. */
  orderKey: string;
  target: Target;
  /** The exact request body (it is what gets signed); null sends none. */
  body: string | null;
  /**
   * A record change's members of a trigger's body (`"record":…` and, but for creates, `,"oldRecord":…`).
   * Given instead of `body`: the rest of the body repeats the event's columns, so it is stored once and
   * the body is built for each attempt (`triggerBody`).
   */
  change?: string;
}

/** An event with its target's columns, as both outboxes read it. */
export interface OutboxRow {
  seq: number;
  id: string;
  source: EventSource;
  name: string;
  collection: string;
  action: string;
  orderKey: string;
  url: string;
  method: string;
  origin: string;
  headers: string;
  secret: string;
  body: string | null;
  change: string | null;
  status: EventStatus;
  attempts: number;
  nextAttemptAt: number;
  created: string;
}

/** A pending event as a worker is told of it (just committed, or queued again). */
export interface PendingRow {
  seq: number;
  id: string;
  origin: string;
  orderKey: string;
  nextAttemptAt: number;
  attempts: number;
  /** The whole event, where the writer or reader had it at hand: the worker then sends it without
   * reading it back (SQLite; see DeliveryWorker.attach). */
  row?: OutboxRow;
}

/**
 * The body of a trigger event stored as its change: byte for byte what JSON.stringify gives for
 * `{id, event, database, collection, record, oldRecord?, timestamp}`, which is what it is signed as.
 */
export function triggerBody(row: Pick<OutboxRow, 'id' | 'action' | 'collection' | 'created'>, database: string, change: string): string {
  const q = JSON.stringify;
  return `{"id":${q(row.id)},"event":${q(`record.${row.action}`)},"database":${q(database)},"collection":${q(row.collection)},${change},"timestamp":${q(row.created)}}`;
}

/** One attempt to deliver an outbound webhook (API contract §7), kept in its database. */
export interface WebhookLog {
  id: string;
  source: EventSource;
  /** Cron job or workflow name ('' for triggers). */
  name: string;
  collection: string;
  action: string;
  eventId: string;
  url: string;
  method: string;
  attempt: number;
  status: 'success' | 'failed' | 'retrying';
  /** The receiver's HTTP status; 0 when there was no answer (timeout, connection error). */
  statusCode: number;
  durationMs: number;
  error: string;
  /** The node that made the attempt (CAIRN_NODE_ID): several share one PostgreSQL database. */
  node: string;
  created: string;
}

/** A log about to be written; it also keeps its event's outbox seq (not part of the API), by which a retry finds the event. */
export type NewLog = Omit<WebhookLog, 'id'> & { eventSeq: number };

/** An attempt's outcome: the event's next state, and the attempt's log. Written by the store. */
export interface Settlement {
  seq: number;
  status: EventStatus;
  attempts: number;
  /** When the event is due again (ms), for a retry. */
  next: number;
  log: NewLog;
}
