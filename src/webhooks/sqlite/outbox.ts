import type { Queryable, SchemaStep, Transaction } from '../../storage/index.ts';
import { insertLogs } from '../logs.ts';
import { originOf, type Target } from '../target.ts';
import type { EventStatus, OutboxEntry, OutboxRow, PendingRow, Settlement } from '../types.ts';

/**
 * The transactional outbox (`_webhook_outbox`, one per database). An event is inserted in the same
 * transaction as the change that caused it, so it exists exactly when the change committed. It stays
 * `pending` until an attempt settles it (`success`, `failed`, or `pending` again for a retry): which
 * events are in flight is the delivery worker's memory, so a crash simply leaves them pending and they
 * are sent again at the next start. Finished events stay until pruned, so a log's event can be resent.
 *
 * Pending events are found without an index: every event below the low watermark
 * (`_webhook_outbox_state.low`) is finished, so they are read by seq (the rowid) from there on. The
 * watermark moves up when attempts are saved and down when an old event is queued again.
 */

/** The first outbox table; `outboxV2Step` rebuilds it. */
export const outboxTableStep: SchemaStep = {
  id: 'webhooks.outbox',
  async up(tx) {
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

/**
 * Rebuilds the outbox with the fewest indexes a record change has to update, since each costs every
 * change a page write: no uniqueness index on `id` (ids are UUIDv7; retries find an event by seq),
 * no AUTOINCREMENT (its counter is one more page per insert; pruning keeps the newest row instead, so
 * a seq is never handed out twice), and one partial index on pending events by seq, which the worker
 * reads from (it keeps its own view of what is pending, src/webhooks/sqlite/queue.ts). Rows an earlier
 * version left `sending` become `pending`.
 */
export const outboxV2Step: SchemaStep = {
  id: 'webhooks.outbox-v2',
  async up(tx) {
    await tx.exec(`CREATE TABLE _webhook_outbox_v2 (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL,
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
    INSERT INTO _webhook_outbox_v2
      SELECT seq, id, source, name, collection, action, orderKey, url, method, origin, headers, secret, body,
        CASE status WHEN 'sending' THEN 'pending' ELSE status END, attempts, nextAttemptAt, created, updated
      FROM _webhook_outbox;
    DROP TABLE _webhook_outbox;
    ALTER TABLE _webhook_outbox_v2 RENAME TO _webhook_outbox;
    CREATE INDEX _webhook_outbox_pending ON _webhook_outbox (seq) WHERE status = 'pending';
    CREATE INDEX _webhook_outbox_finished ON _webhook_outbox (updated) WHERE status IN ('success', 'failed');`);
  },
};

/**
 * Drops the partial index on pending events: it cost every event write a second page in its commit
 * (about a tenth of a record create with one trigger). Its one use, finding pending events, is served
 * by the low watermark, seeded here from the index before it goes.
 */
export const outboxV3Step: SchemaStep = {
  id: 'webhooks.outbox-v3',
  async up(tx) {
    await tx.exec(`CREATE TABLE _webhook_outbox_state (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      low INTEGER NOT NULL
    );
    INSERT INTO _webhook_outbox_state (id, low) VALUES (1, COALESCE(
      (SELECT MIN(seq) FROM _webhook_outbox WHERE status = 'pending'),
      (SELECT MAX(seq) FROM _webhook_outbox) + 1,
      1));
    DROP INDEX _webhook_outbox_pending;`);
  },
};

/**
 * Moves what every event of one trigger (or cron job, or workflow step) repeats out of the event row
 * into `_webhook_targets`, one row per distinct target: an event row is the record change's biggest
 * write after the record itself, and every byte of it is written to the WAL and checkpointed. Events
 * keep their id, order key, body and state, and reference their target.
 */
export const outboxV4Step: SchemaStep = {
  id: 'webhooks.outbox-v4',
  async up(tx) {
    await tx.exec(`CREATE TABLE _webhook_targets (
      id INTEGER PRIMARY KEY,
      key TEXT NOT NULL UNIQUE,
      source TEXT NOT NULL,
      name TEXT NOT NULL,
      collection TEXT NOT NULL,
      action TEXT NOT NULL,
      url TEXT NOT NULL,
      method TEXT NOT NULL,
      origin TEXT NOT NULL,
      headers JSON NOT NULL,
      secret TEXT NOT NULL
    );
    INSERT OR IGNORE INTO _webhook_targets (key, source, name, collection, action, url, method, origin, headers, secret)
      SELECT json_array(source, name, collection, action, url, method, headers, secret), source, name, collection, action, url, method, origin, headers, secret
      FROM _webhook_outbox ORDER BY seq;
    CREATE TABLE _webhook_outbox_v4 (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL,
      target INTEGER NOT NULL,
      orderKey TEXT NOT NULL,
      body TEXT,
      status TEXT DEFAULT 'pending' NOT NULL,
      attempts INTEGER DEFAULT 0 NOT NULL,
      nextAttemptAt INTEGER NOT NULL,
      created TEXT NOT NULL,
      updated TEXT
    );
    INSERT INTO _webhook_outbox_v4
      SELECT o.seq, o.id, t.id, o.orderKey, o.body, o.status, o.attempts, o.nextAttemptAt, o.created, o.updated
      FROM _webhook_outbox o JOIN _webhook_targets t ON t.key = json_array(o.source, o.name, o.collection, o.action, o.url, o.method, o.headers, o.secret);
    DROP TABLE _webhook_outbox;
    ALTER TABLE _webhook_outbox_v4 RENAME TO _webhook_outbox;
    CREATE INDEX _webhook_outbox_finished ON _webhook_outbox (updated) WHERE status IN ('success', 'failed');`);
  },
};

/** A trigger event keeps only its record change; see OutboxEntry.change. */
export const outboxChangeStep: SchemaStep = {
  id: 'webhooks.outbox-change',
  async up(tx) {
    await tx.exec('ALTER TABLE _webhook_outbox ADD COLUMN change TEXT');
  },
};

// The target is named by its cached id and checked against its key in the same statement, so a
// stale id (a rolled-back transaction wrote it) inserts nothing and is looked up again.
const INSERT = `INSERT INTO _webhook_outbox (id, target, orderKey, body, change, nextAttemptAt, created)
  SELECT ?, id, ?, ?, ?, ?, ? FROM _webhook_targets WHERE id = ? AND key = ?`;
const ENSURE_TARGET = `INSERT INTO _webhook_targets (key, source, name, collection, action, url, method, origin, headers, secret)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`;

// Triggers are parsed once per collection object, so their targets are reused: their origin and
// encoded headers are worked out once too.
interface Encoded {
  origin: string;
  headers: string;
  /** The last target key built for this target, and what it was built for (a trigger's is always the same). */
  keyOf?: string;
  key?: string;
}
const targetCache = new WeakMap<Target, Encoded>();

function encoded(t: Target): Encoded {
  let e = targetCache.get(t);
  if (!e) targetCache.set(t, (e = { origin: originOf(t.url), headers: JSON.stringify(t.headers) }));
  return e;
}

/** The same key the schema step builds with json_array (a differently escaped twin would only be a
 * duplicate target row). */
function targetKey(e: OutboxEntry, enc: Encoded): string {
  const of = `${e.source}\n${e.name}\n${e.collection}\n${e.action}`;
  if (enc.keyOf !== of) {
    const t = e.target;
    enc.key = JSON.stringify([e.source, e.name, e.collection, e.action, t.url, t.method, enc.headers, t.secret]);
    enc.keyOf = of;
  }
  return enc.key!;
}

/** Target row ids of one database, by target key (see INSERT for why a stale one does no harm). */
export type TargetIds = Map<string, number>;

/**
 * Writes an event in the caller's transaction and returns what the worker's queue needs of it.
 * `ids` caches the database's target rows: an event usually costs one insert.
 */
export async function insertEvent(tx: Transaction, ids: TargetIds, e: OutboxEntry, now: Date): Promise<PendingRow> {
  const iso = now.toISOString();
  const t = e.target;
  const enc = encoded(t);
  const due = now.getTime();
  const key = targetKey(e, enc);
  const params = [e.id, e.orderKey, e.body, e.change ?? null, due, iso, ids.get(key) ?? 0, key];
  let written = await tx.run(INSERT, params);
  if (written.changes === 0) {
    await tx.run(ENSURE_TARGET, [key, e.source, e.name, e.collection, e.action, t.url, t.method, enc.origin, enc.headers, t.secret]);
    const id = (await tx.get<{ id: number }>('SELECT id FROM _webhook_targets WHERE key = ?', [key]))!.id;
    ids.set(key, id);
    params[6] = id;
    written = await tx.run(INSERT, params);
  }
  const seq = written.lastInsertRowid;
  const row: OutboxRow = {
    seq,
    id: e.id,
    source: e.source,
    name: e.name,
    collection: e.collection,
    action: e.action,
    orderKey: e.orderKey,
    url: t.url,
    method: t.method,
    origin: enc.origin,
    headers: enc.headers,
    secret: t.secret,
    body: e.body,
    change: e.change ?? null,
    status: 'pending',
    attempts: 0,
    nextAttemptAt: due,
    created: iso,
  };
  return { seq, id: e.id, origin: enc.origin, orderKey: e.orderKey, nextAttemptAt: due, attempts: 0, row };
}

// Where the pending events start: the watermark, or `afterSeq` when that is further on.
const FROM_LOW = '(SELECT MAX(?, low - 1) FROM _webhook_outbox_state)';
// The outer join yields the last seq even when nothing is pending (then a row of nulls).
const PENDING = `SELECT t.top, p.* FROM (SELECT MAX(seq) AS top FROM _webhook_outbox) t LEFT JOIN (
    SELECT o.seq, o.id, g.source, g.name, g.collection, g.action, o.orderKey, g.url, g.method, g.origin, g.headers, g.secret,
      o.body, o.change, o.status, o.attempts, o.nextAttemptAt, o.created FROM _webhook_outbox o JOIN _webhook_targets g ON g.id = o.target
    WHERE o.seq > ${FROM_LOW} AND o.status = 'pending' ORDER BY o.seq LIMIT ?) p
  ORDER BY p.seq`;
const UNFINISHED = `SELECT 1 AS x FROM _webhook_outbox WHERE seq > ${FROM_LOW} AND orderKey = ? AND status = 'pending' LIMIT 1`;

/**
 * Pending events after `afterSeq` (and not below the low watermark), oldest first, at most `limit`,
 * and the outbox's last seq. One statement, so one snapshot: no commit falls between the two. It is a
 * read, so it takes no turn at the writer (where it would wait for the open group commit). Whole
 * events, so that sending them needs no second read.
 */
export async function loadPending(db: Queryable, afterSeq: number, limit: number): Promise<{ rows: OutboxRow[]; top: number }> {
  const found = await db.all<OutboxRow & { top: number | null }>(PENDING, [afterSeq, limit]);
  const top = Number(found[0]?.top ?? 0);
  const rows = found.filter((r) => r.seq !== null).map(({ top: _top, ...row }) => row);
  return { rows, top };
}

// An event with its target's columns: the shape deliveries and logs read.
const EVENT = `SELECT o.seq, o.id, t.source, t.name, t.collection, t.action, o.orderKey, t.url, t.method, t.origin, t.headers, t.secret,
  o.body, o.change, o.status, o.attempts, o.nextAttemptAt, o.created FROM _webhook_outbox o JOIN _webhook_targets t ON t.id = o.target`;

/** The events of some seqs, by seq, in one statement: a read costs about as much to start as to run,
 * and the worker starts its attempts a pass at a time. */
export async function eventsBySeq(db: Queryable, seqs: readonly number[]): Promise<Map<number, OutboxRow>> {
  const rows = await db.all<OutboxRow>(`${EVENT} WHERE o.seq IN (${seqs.map(() => '?').join(', ')})`, seqs);
  return new Map(rows.map((r) => [r.seq, r]));
}

/**
 * Moves the low watermark up to the first event still pending (or past the last event), in the
 * transaction that saved attempts. It reads the outbox itself rather than the worker's memory, so an
 * event queued again or settled by another batch meanwhile is never skipped; the scan starts at the
 * old watermark and stops at the first pending event, so over time each event is passed once.
 */
export async function advanceLow(tx: Transaction): Promise<void> {
  await tx.run(`UPDATE _webhook_outbox_state SET low = COALESCE(
    (SELECT seq FROM _webhook_outbox WHERE seq >= _webhook_outbox_state.low AND status = 'pending' ORDER BY seq LIMIT 1),
    (SELECT MAX(seq) FROM _webhook_outbox) + 1,
    low)`);
}

export async function settleEvent(tx: Transaction, seq: number, status: EventStatus, attempts: number, nextAttemptAt: number, now: string): Promise<void> {
  await tx.run('UPDATE _webhook_outbox SET status = ?, attempts = ?, nextAttemptAt = ?, updated = ? WHERE seq = ?', [status, attempts, nextAttemptAt, now, seq]);
}

// Events per multi-row settle: 5 parameters each.
const SETTLES_PER_UPDATE = 64;

/** The outcomes of many attempts, one statement per SETTLES_PER_UPDATE (a join on seq, the rowid). */
export async function settleEvents(tx: Transaction, items: ReadonlyArray<{ seq: number; status: EventStatus; attempts: number; next: number; updated: string }>): Promise<void> {
  for (let i = 0; i < items.length; i += SETTLES_PER_UPDATE) {
    const chunk = items.slice(i, i + SETTLES_PER_UPDATE);
    const params: unknown[] = [];
    for (const s of chunk) params.push(s.seq, s.status, s.attempts, s.next, s.updated);
    await tx.run(
      `UPDATE _webhook_outbox SET status = v.column2, attempts = v.column3, nextAttemptAt = v.column4, updated = v.column5
        FROM (VALUES ${chunk.map(() => '(?, ?, ?, ?, ?)').join(', ')}) AS v WHERE _webhook_outbox.seq = v.column1`,
      params,
    );
  }
}

/** The event of a log: by its seq, checked against its id (logs written before seqs were kept: by id). */
export async function findEvent(db: Queryable, seq: number, id: string): Promise<OutboxRow | undefined> {
  if (seq > 0) return db.get<OutboxRow>(`${EVENT} WHERE o.seq = ? AND o.id = ?`, [seq, id]);
  return db.get<OutboxRow>(`${EVENT} WHERE o.id = ?`, [id]);
}

/**
 * Queues an event again with a fresh attempt budget, due now; the watermark comes down to it. Always
 * true: this process's worker is the only one sending, and it knows what it is sending.
 */
export async function requeueEvent(db: Queryable, seq: number, now: Date): Promise<boolean> {
  await db.transaction(async (tx) => {
    await tx.run("UPDATE _webhook_outbox SET status = 'pending', attempts = 0, nextAttemptAt = ?, updated = ? WHERE seq = ?", [now.getTime(), now.toISOString(), seq]);
    await tx.run('UPDATE _webhook_outbox_state SET low = MIN(low, ?)', [seq]);
  });
  return true;
}

/** Whether an event of that key is still waiting or being sent (cron overlap check). Reads from the
 * watermark on: in steady state a handful of rows, during a backlog the backlog. */
export async function hasUnfinished(q: Queryable, orderKey: string): Promise<boolean> {
  return (await q.get(UNFINISHED, [0, orderKey])) !== undefined;
}

/** Deletes finished events last touched before `before` (ISO). The newest event always stays: seqs
 * are rowids, and SQLite would hand out the seq of a deleted newest row again. */
export async function pruneFinished(db: Queryable, before: string): Promise<number> {
  return (
    await db.run("DELETE FROM _webhook_outbox WHERE status IN ('success', 'failed') AND updated < ? AND seq < (SELECT MAX(seq) FROM _webhook_outbox)", [before])
  ).changes;
}

/**
 * Writes the outcomes of attempts in one transaction: the events' new state, their logs, and the
 * low watermark moved past what they finished. Multi-row statements: per statement, binding and
 * stepping cost about as much as the row itself.
 */
export async function saveOutcomes(db: Queryable, items: readonly Settlement[]): Promise<void> {
  await db.transaction(async (tx) => {
    await settleEvents(tx, items.map((s) => ({ seq: s.seq, status: s.status, attempts: s.attempts, next: s.next, updated: s.log.created })));
    await insertLogs(tx, items.map((s) => s.log));
    await advanceLow(tx);
  });
}
