import { uuidv7 } from '../lib/ids.ts';
import { join, orderColumn, type Queryable, raw, type SchemaStep, type Sql, sql } from '../storage/index.ts';
import type { NewLog, WebhookLog } from './types.ts';

/** `_webhook_logs`: one row per delivery attempt, in its database (API contract §7): written by the
 * stores with their attempts' outcomes, listed and found by the service, pruned by age. */

export const logsTableStep: SchemaStep = {
  id: 'webhooks.logs',
  async up(tx) {
    await tx.exec(`CREATE TABLE _webhook_logs (
      id TEXT PRIMARY KEY NOT NULL,
      source TEXT NOT NULL,
      name TEXT DEFAULT '' NOT NULL,
      collection TEXT DEFAULT '' NOT NULL,
      action TEXT DEFAULT '' NOT NULL,
      eventId TEXT NOT NULL,
      url TEXT NOT NULL,
      method TEXT NOT NULL,
      attempt INTEGER NOT NULL,
      status TEXT NOT NULL,
      statusCode INTEGER DEFAULT 0 NOT NULL,
      durationMs INTEGER DEFAULT 0 NOT NULL,
      error TEXT DEFAULT '' NOT NULL,
      created TEXT NOT NULL${orderColumn(tx.dialect)}
    );
    CREATE INDEX _webhook_logs_created ON _webhook_logs (created);
    CREATE INDEX _webhook_logs_collection ON _webhook_logs (collection, created);
    CREATE INDEX _webhook_logs_status ON _webhook_logs (status, created);`);
  },
};

/** Logs also keep their event's outbox seq (see NewLog). */
export const logsEventSeqStep: SchemaStep = {
  id: 'webhooks.logs-event-seq',
  async up(tx) {
    await tx.exec('ALTER TABLE _webhook_logs ADD COLUMN eventSeq INTEGER DEFAULT 0 NOT NULL');
  },
};

/** Which node made an attempt. */
export const logsNodeStep: SchemaStep = {
  id: 'webhooks.logs-node',
  async up(tx) {
    await tx.exec("ALTER TABLE _webhook_logs ADD COLUMN node TEXT DEFAULT '' NOT NULL");
  },
};

const COLUMNS = 'id, source, name, collection, action, eventId, url, method, attempt, status, statusCode, durationMs, error, node, created';
const INSERT = `INSERT INTO _webhook_logs (${COLUMNS}, eventSeq) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

// Rows per multi-row insert: 16 parameters each, well under SQLite's limit of 32,766.
const LOGS_PER_INSERT = 64;
const ROW = `(${Array.from({ length: 16 }, () => '?').join(', ')})`;

/** Writes many logs with one statement per LOGS_PER_INSERT (a statement costs about as much to run as a row to insert). */
export async function insertLogs(q: Queryable, logs: readonly NewLog[]): Promise<void> {
  for (let i = 0; i < logs.length; i += LOGS_PER_INSERT) {
    const chunk = logs.slice(i, i + LOGS_PER_INSERT);
    const params: unknown[] = [];
    for (const log of chunk) {
      params.push(uuidv7(), log.source, log.name, log.collection, log.action, log.eventId, log.url, log.method, log.attempt, log.status, log.statusCode, log.durationMs, log.error, log.node, log.created, log.eventSeq);
    }
    await q.run(`INSERT INTO _webhook_logs (${COLUMNS}, eventSeq) VALUES ${chunk.map(() => ROW).join(', ')}`, params);
  }
}

export interface LogFilter {
  collection?: string;
  status?: string;
  source?: string;
  eventId?: string;
}

export interface LogPage {
  page: number;
  perPage: number;
  totalItems: number;
  totalPages: number;
  items: WebhookLog[];
}

/** A page of logs, newest first, in the list shape of API contract §4. */
export async function listLogs(db: Queryable, filter: LogFilter, page: number, perPage: number): Promise<LogPage> {
  const conditions: Sql[] = [];
  if (filter.collection) conditions.push(sql`collection = ${filter.collection}`);
  if (filter.status) conditions.push(sql`status = ${filter.status}`);
  if (filter.source) conditions.push(sql`source = ${filter.source}`);
  if (filter.eventId) conditions.push(sql`eventId = ${filter.eventId}`);
  const where = conditions.length > 0 ? sql` WHERE ${join(conditions, ' AND ')}` : sql``;
  const count = sql`SELECT COUNT(*) AS n FROM _webhook_logs${where}`;
  const totalItems = Number((await db.get<{ n: number }>(count.text, count.params))?.n ?? 0);
  // rowid breaks ties between logs written in the same millisecond, newest first.
  const q = sql`SELECT ${raw(COLUMNS)} FROM _webhook_logs${where} ORDER BY created DESC, ${raw(db.dialect.insertionOrder('_webhook_logs'))} DESC LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`;
  const items = await db.all<WebhookLog>(q.text, q.params);
  return { page, perPage, totalItems, totalPages: Math.ceil(totalItems / perPage), items };
}

export async function findLog(db: Queryable, id: string): Promise<(WebhookLog & { eventSeq: number }) | undefined> {
  return db.get<WebhookLog & { eventSeq: number }>(`SELECT ${COLUMNS}, eventSeq FROM _webhook_logs WHERE id = ?`, [id]);
}

/** Deletes logs written before `before` (ISO). */
export async function pruneLogs(db: Queryable, before: string): Promise<number> {
  return (await db.run('DELETE FROM _webhook_logs WHERE created < ?', [before])).changes;
}
