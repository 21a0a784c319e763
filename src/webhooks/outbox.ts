import { list, type Queryable, type SchemaStep, sql, type Transaction } from '../storage/index.ts';
import { originOf, type Target } from './target.ts';

/**
 * The transactional outbox (`_webhook_outbox`, one per database). An event is inserted in the same
 * transaction as the change that caused it, so it exists exactly when the change committed. The
 * delivery worker claims due events (`pending` → `sending`) and settles each attempt; finished
 * events (`success`, `failed`) stay until pruned, so a log's event can be sent again.
 */

export type EventSource = 'trigger' | 'cron' | 'workflow';
export type EventStatus = 'pending' | 'sending' | 'success' | 'failed';

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

/** Writes an event in the caller's transaction. An id already present is left alone, which makes
 * re-running a step that enqueues under a deterministic id harmless. */
export async function insertEvent(tx: Transaction, e: OutboxEntry, now: Date): Promise<void> {
  const iso = now.toISOString();
  const t = e.target;
  await tx.run(INSERT, [e.id, e.source, e.name, e.collection, e.action, e.orderKey, t.url, t.method, originOf(t.url), JSON.stringify(t.headers), t.secret, e.body, now.getTime(), iso, iso]);
}

/**
 * Claims up to `limit` due events (`sending`), oldest first, skipping events whose key has an earlier
 * unfinished event (per-record order) and origins that already have all the connections they may use.
 * `accept` decides per candidate (it tracks per-origin capacity while the batch fills).
 */
export async function claimDue(db: Queryable, now: number, limit: number, fullOrigins: readonly string[], accept: (row: OutboxRow) => boolean): Promise<OutboxRow[]> {
  return db.transaction(async (tx) => {
    const notFull = fullOrigins.length > 0 ? sql` AND o.origin NOT IN (${list(fullOrigins)})` : sql``;
    const q = sql`SELECT o.* FROM _webhook_outbox o
      WHERE o.status = 'pending' AND o.nextAttemptAt <= ${now}${notFull}
        AND NOT EXISTS (SELECT 1 FROM _webhook_outbox p WHERE p.orderKey = o.orderKey AND p.seq < o.seq AND p.status IN ('pending', 'sending'))
      ORDER BY o.seq LIMIT ${limit * 4}`;
    const claimed: OutboxRow[] = [];
    for (const row of await tx.all<OutboxRow>(q.text, q.params)) {
      if (claimed.length >= limit) break;
      if (!accept(row)) continue;
      claimed.push(row);
    }
    if (claimed.length > 0) {
      const ids = claimed.map((r) => r.id);
      const u = sql`UPDATE _webhook_outbox SET status = 'sending' WHERE id IN (${list(ids)})`;
      await tx.run(u.text, u.params);
    }
    return claimed;
  });
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

/** At start: attempts a previous process claimed but never settled (it crashed) go back to the queue. */
export async function requeueInterrupted(db: Queryable): Promise<number> {
  return (await db.run("UPDATE _webhook_outbox SET status = 'pending' WHERE status = 'sending'")).changes;
}

export async function findEvent(db: Queryable, id: string): Promise<OutboxRow | undefined> {
  return db.get<OutboxRow>('SELECT * FROM _webhook_outbox WHERE id = ?', [id]);
}

/** Queues an event again with a fresh attempt budget, due now; false when it is being sent right now. */
export async function requeueEvent(db: Queryable, id: string, now: Date): Promise<boolean> {
  const r = await db.run("UPDATE _webhook_outbox SET status = 'pending', attempts = 0, nextAttemptAt = ?, updated = ? WHERE id = ? AND status <> 'sending'", [
    now.getTime(),
    now.toISOString(),
    id,
  ]);
  return r.changes > 0;
}

/** Whether an event of that key is still waiting or being sent (cron overlap check). */
export async function hasUnfinished(q: Queryable, orderKey: string): Promise<boolean> {
  return (await q.get("SELECT 1 AS x FROM _webhook_outbox WHERE orderKey = ? AND status IN ('pending', 'sending') LIMIT 1", [orderKey])) !== undefined;
}

/** Deletes finished events last touched before `before` (ISO). */
export async function pruneFinished(db: Queryable, before: string): Promise<number> {
  return (await db.run("DELETE FROM _webhook_outbox WHERE status IN ('success', 'failed') AND updated < ?", [before])).changes;
}
