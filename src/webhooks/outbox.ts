import type { Queryable, SchemaStep, Transaction } from '../storage/index.ts';
import { originOf, type Target } from './target.ts';

/**
 * The transactional outbox (`_webhook_outbox`, one per database). An event is inserted in the same
 * transaction as the change that caused it, so it exists exactly when the change committed. It stays
 * `pending` until an attempt settles it (`success`, `failed`, or `pending` again for a retry): which
 * events are in flight is the delivery worker's memory, so a crash simply leaves them pending and they
 * are sent again at the next start. Finished events stay until pruned, so a log's event can be resent.
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
}

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
  status: EventStatus;
  attempts: number;
  nextAttemptAt: number;
  created: string;
}

export const outboxTableStep: SchemaStep = {
  id: 'webhooks.outbox',
  async up(tx) {
    // AUTOINCREMENT: `seq` orders events and must never be reused after pruning.
    await tx.exec(`CREATE TABLE _webhook_outbox (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      id TEXT NOT NULL UNIQUE,
      source TEXT NOT NULL,
      name TEXT DEFAULT '' NOT NULL,
      collection TEXT DEFAULT '' NOT NULL,
      action TEXT DEFAULT '' NOT NULL,
      orderKey TEXT NOT NULL,
      url TEXT NOT NULL,
      method TEXT NOT NULL,
      origin TEXT NOT NULL,
      headers JSON DEFAULT '{}' NOT NULL,
      secret TEXT DEFAULT '' NOT NULL,
      body TEXT,
      status TEXT DEFAULT 'pending' NOT NULL,
      attempts INTEGER DEFAULT 0 NOT NULL,
      nextAttemptAt INTEGER NOT NULL,
      created TEXT NOT NULL,
      updated TEXT NOT NULL
    );
    CREATE INDEX _webhook_outbox_pending ON _webhook_outbox (seq) WHERE status = 'pending';
    CREATE INDEX _webhook_outbox_order ON _webhook_outbox (orderKey, seq) WHERE status IN ('pending', 'sending');
    CREATE INDEX _webhook_outbox_finished ON _webhook_outbox (updated) WHERE status IN ('success', 'failed');`);
  },
};

const INSERT = `INSERT OR IGNORE INTO _webhook_outbox
  (id, source, name, collection, action, orderKey, url, method, origin, headers, secret, body, status, attempts, nextAttemptAt, created, updated)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?)`;

/** Writes an event in the caller's transaction and returns its receiver's origin. An id already
 * present is left alone, which makes re-running a step that enqueues under a deterministic id harmless. */
export async function insertEvent(tx: Transaction, e: OutboxEntry, now: Date): Promise<string> {
  const iso = now.toISOString();
  const t = e.target;
  const origin = originOf(t.url);
  await tx.run(INSERT, [e.id, e.source, e.name, e.collection, e.action, e.orderKey, t.url, t.method, origin, JSON.stringify(t.headers), t.secret, e.body, now.getTime(), iso, iso]);
  return origin;
}

/**
 * Pending indexes by receiver origin, by due time and by order key: the worker reads one origin's
 * queue head, the backoff timer the earliest future attempt, and the order check a key's earlier
 * events, none of them scanning the backlog. (Replaces the indexes of the first outbox step.)
 */
export const outboxIndexesStep: SchemaStep = {
  id: 'webhooks.outbox-indexes',
  async up(tx) {
    await tx.exec(`DROP INDEX IF EXISTS _webhook_outbox_pending;
    DROP INDEX IF EXISTS _webhook_outbox_order;
    UPDATE _webhook_outbox SET status = 'pending' WHERE status = 'sending';
    CREATE INDEX _webhook_outbox_origin ON _webhook_outbox (origin, seq) WHERE status = 'pending';
    CREATE INDEX _webhook_outbox_due ON _webhook_outbox (nextAttemptAt) WHERE status = 'pending';
    CREATE INDEX _webhook_outbox_order ON _webhook_outbox (orderKey, seq) WHERE status = 'pending';`);
  },
};

/**
 * Up to `limit` due events of one receiver origin, oldest first, leaving out events whose key has an
 * earlier pending event (one record's events reach a receiver in order; an event in flight is still
 * pending, so it holds back its successors too).
 */
export async function dueEvents(db: Queryable, origin: string, now: number, limit: number): Promise<OutboxRow[]> {
  return db.all<OutboxRow>(
    `SELECT o.* FROM _webhook_outbox o
    WHERE o.status = 'pending' AND o.origin = ? AND o.nextAttemptAt <= ?
      AND NOT EXISTS (SELECT 1 FROM _webhook_outbox p WHERE p.orderKey = o.orderKey AND p.seq < o.seq AND p.status = 'pending')
    ORDER BY o.seq LIMIT ?`,
    [origin, now, limit],
  );
}

/** Origins with events due now. */
export async function dueOrigins(db: Queryable, now: number): Promise<string[]> {
  return (await db.all<{ origin: string }>("SELECT DISTINCT origin FROM _webhook_outbox WHERE status = 'pending' AND nextAttemptAt <= ?", [now])).map((r) => r.origin);
}

/** When the next event waiting for a later time (a retry in backoff) becomes due, in ms since epoch.
 * Events already due but not started wait for a slot or an earlier event, not for a time. */
export async function nextDue(db: Queryable, now: number): Promise<number | undefined> {
  const row = await db.get<{ t: number | null }>("SELECT MIN(nextAttemptAt) AS t FROM _webhook_outbox WHERE status = 'pending' AND nextAttemptAt > ?", [now]);
  return row?.t ?? undefined;
}

export async function settleEvent(tx: Transaction, id: string, status: EventStatus, attempts: number, nextAttemptAt: number, now: string): Promise<void> {
  await tx.run('UPDATE _webhook_outbox SET status = ?, attempts = ?, nextAttemptAt = ?, updated = ? WHERE id = ?', [status, attempts, nextAttemptAt, now, id]);
}

export async function findEvent(db: Queryable, id: string): Promise<OutboxRow | undefined> {
  return db.get<OutboxRow>('SELECT * FROM _webhook_outbox WHERE id = ?', [id]);
}

/** Queues an event again with a fresh attempt budget, due now. */
export async function requeueEvent(db: Queryable, id: string, now: Date): Promise<void> {
  await db.run("UPDATE _webhook_outbox SET status = 'pending', attempts = 0, nextAttemptAt = ?, updated = ? WHERE id = ?", [now.getTime(), now.toISOString(), id]);
}

/** Whether an event of that key is still waiting or being sent (cron overlap check). */
export async function hasUnfinished(q: Queryable, orderKey: string): Promise<boolean> {
  return (await q.get("SELECT 1 AS x FROM _webhook_outbox WHERE orderKey = ? AND status = 'pending' LIMIT 1", [orderKey])) !== undefined;
}

/** Deletes finished events last touched before `before` (ISO). */
export async function pruneFinished(db: Queryable, before: string): Promise<number> {
  return (await db.run("DELETE FROM _webhook_outbox WHERE status IN ('success', 'failed') AND updated < ?", [before])).changes;
}
