import type { Config } from '../config.ts';
import { badRequest, conflict, notFound } from '../errors.ts';
import { uuidv7 } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { changeHook, type RecordChangeHook } from '../records/deps.ts';
import { pagination, param } from '../records/query-params.ts';
import type { Database, DatabaseRegistry, Transaction } from '../storage/index.ts';
import { OutboundPolicy } from '../lib/outbound.ts';
import { findLog, type LogPage, listLogs, pruneLogs } from './logs.ts';
import type { Deliverer, OutboxStore } from './store.ts';
import { triggersOf, writesFor } from './triggers.ts';
import type { OutboxEntry, PendingRow } from './types.ts';

const LOG_STATUSES = ['success', 'failed', 'retrying'];
const SOURCES = ['trigger', 'cron', 'workflow'];
const PRUNE_EVERY_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface WebhookServiceOptions {
  registry: DatabaseRegistry;
  /** The storage driver's outbox (SQLite's, or PostgreSQL's with leases for several nodes). */
  outbox: OutboxStore;
  secret: string;
  config: Pick<Config, 'webhookTimeoutMs' | 'webhookMaxAttempts' | 'webhookBackoffMs' | 'webhookMaxDeferMs' | 'webhookLogDays' | 'nodeId' | 'webhookLeaseMs' | 'outboundAllow'>;
  /** Where deliveries may not go; by default from `config.outboundAllow`. */
  outbound?: OutboundPolicy;
}

/**
 * The outbound webhook engine: writes events to the outbox inside the transactions that cause them
 * (record changes through `changeHook`, cron runs and workflow steps through `enqueue`), delivers them
 * in the background once started, and serves the logs.
 */
export class WebhookService {
  private worker?: Deliverer;
  private pruner?: NodeJS.Timeout;
  /** The prune under way, which `stop` waits for. */
  private pruning?: Promise<void>;
  private log?: Logger;
  private stopping?: Promise<void>;

  /** Where webhooks may not go (API contract §20): cron jobs and workflow steps check URLs against it when saved. */
  readonly outbound: OutboundPolicy;

  constructor(private readonly o: WebhookServiceOptions) {
    this.outbound = o.outbound ?? new OutboundPolicy(o.config.outboundAllow);
  }

  get outbox(): OutboxStore {
    return this.o.outbox;
  }

  /** The records change hook: one event per matching enabled trigger, in the record's transaction. */
  readonly changeHook: RecordChangeHook = changeHook(writesFor, async (tx, event) => {
    const triggers = triggersOf(event.collection);
    if (triggers.length === 0) return;
    const now = new Date();
    const events: PendingRow[] = [];
    let change: string | undefined;
    for (const trigger of triggers) {
      if (trigger.action !== event.action) continue;
      // The body's other members are the event's own columns: built for each attempt (triggerBody).
      change ??= `"record":${event.recordJson()}${event.action === 'create' ? '' : `,"oldRecord":${JSON.stringify(event.oldRecord ?? null)}`}`;
      const queued = await this.o.outbox.insert(
        tx,
        event.database,
        {
          id: uuidv7(),
          source: 'trigger',
          name: '',
          collection: event.collection.name,
          action: event.action,
          // Per receiver and record: one record's events reach a receiver in order, and a slow
          // receiver does not hold back another receiver's copy.
          orderKey: `${event.collection.id}/${event.record.id} ${trigger.method} ${trigger.url}`,
          target: trigger,
          body: null,
          change,
        },
        now,
      );
      events.push(queued);
    }
    if (events.length > 0) tx.afterCommit(() => this.worker?.committed(event.database, events));
  });

  /** Writes an event in the caller's transaction; delivery starts once it commits. */
  async enqueue(tx: Transaction, database: string, entry: OutboxEntry): Promise<void> {
    const queued = await this.o.outbox.insert(tx, database, entry, new Date());
    tx.afterCommit(() => this.worker?.committed(database, [queued]));
  }

  /** Starts delivering (recovering what a crash left) and pruning. Only the server calls this. */
  async start(log: Logger): Promise<void> {
    this.log = log;
    const c = this.o.config;
    this.worker = this.o.outbox.worker({
      registry: this.o.registry,
      secret: this.o.secret,
      timeoutMs: c.webhookTimeoutMs,
      outbound: this.outbound,
      maxAttempts: c.webhookMaxAttempts,
      backoffMs: c.webhookBackoffMs,
      maxDeferMs: c.webhookMaxDeferMs,
      node: c.nodeId,
      leaseMs: c.webhookLeaseMs,
      log,
    });
    this.worker.start();
    if (c.webhookLogDays > 0) {
      // In the background: housekeeping need not hold up the start (stop waits for it).
      const prune = () => {
        this.pruning = this.prune()
          .catch((err) => this.log?.error({ err }, 'pruning webhook logs failed'))
          .finally(() => (this.pruning = undefined));
      };
      prune();
      this.pruner = setInterval(prune, PRUNE_EVERY_MS);
      this.pruner.unref();
    }
  }

  /**
   * Graceful stop: see DeliveryWorker.stop (`graceMs` bounds how long attempts in flight may go on).
   * Databases must still be open. Calls after the first wait for the same stop: the host stops
   * delivery early in a shutdown, and the app's close hook then must not go on before it is done.
   */
  stop(graceMs?: number): Promise<void> {
    this.stopping ??= (async () => {
      clearInterval(this.pruner);
      this.pruner = undefined;
      await this.pruning;
      await this.worker?.stop(graceMs);
      this.worker = undefined;
    })();
    return this.stopping;
  }

  /** Deletes logs and finished events older than CAIRN_WEBHOOK_LOG_DAYS in every database. */
  async prune(now = new Date()): Promise<void> {
    if (this.o.config.webhookLogDays <= 0) return;
    const before = new Date(now.getTime() - this.o.config.webhookLogDays * DAY_MS).toISOString();
    for (const { name } of this.o.registry.list()) {
      if (this.stopping) return;
      // A database not open is opened only when it has logs old enough (registry.peek): every
      // finished event has a log written when it finished, so none older means no old event either.
      const old =
        this.o.registry.opened(name) !== undefined ||
        (await this.o.registry.peek(name, async (q) => (await q.get('SELECT 1 AS old FROM _webhook_logs WHERE created < ? LIMIT 1', [before])) !== undefined, true));
      if (!old) continue;
      const db = await this.o.registry.get(name);
      const logs = await pruneLogs(db, before);
      const events = await this.o.outbox.pruneFinished(db, before);
      if (logs + events > 0) this.log?.info({ database: name, logs, events }, 'pruned old webhook logs');
    }
  }

  async listLogs(db: Database, query: Record<string, unknown>): Promise<LogPage> {
    const { page, perPage } = pagination(query);
    const status = param(query.status);
    if (status !== '' && !LOG_STATUSES.includes(status)) {
      throw badRequest('Invalid status filter.', { status: { code: 'validation_invalid_value', message: `Must be one of ${LOG_STATUSES.join(', ')}.` } });
    }
    const source = param(query.source);
    if (source !== '' && !SOURCES.includes(source)) {
      throw badRequest('Invalid source filter.', { source: { code: 'validation_invalid_value', message: `Must be one of ${SOURCES.join(', ')}.` } });
    }
    return listLogs(db, { collection: param(query.collection), status, source, eventId: param(query.eventId) }, page, perPage);
  }

  /** Sends a log's event again: queued now with a fresh attempt budget. */
  async retry(db: Database, database: string, logId: string): Promise<{ eventId: string; status: 'pending' }> {
    const log = await findLog(db, logId);
    if (!log) throw notFound('Webhook log not found.');
    if (await this.worker?.isInFlight(database, db, log.eventId)) throw conflict('The event is being sent right now.');
    // Attempts already made are written first, so the requeue is not overwritten by one of them.
    await this.worker?.save(database);
    const event = await this.o.outbox.find(db, log.eventSeq, log.eventId);
    if (!event) throw notFound('The event of this log has been pruned and cannot be sent again.');
    const now = new Date();
    if (!(await this.o.outbox.requeue(db, event.seq, now))) throw conflict('The event is being sent right now.');
    this.worker?.requeued(database, { seq: event.seq, id: event.id, origin: event.origin, orderKey: event.orderKey, nextAttemptAt: now.getTime(), attempts: 0 });
    return { eventId: log.eventId, status: 'pending' };
  }
}
