import { backoffDelay } from '../lib/backoff.ts';
import type { Logger } from '../lib/logger.ts';
import type { Database, DatabaseRegistry } from '../storage/index.ts';
import { type DeliveryResult, requestFor, Sender } from './deliver.ts';
import { insertLog } from './logs.ts';
import { claimDue, type EventStatus, nextDue, type OutboxRow, requeueInterrupted, settleEvent } from './outbox.ts';

// Attempts in flight at once, over all databases and receivers: bounds sockets and memory whatever
// the backlog.
const MAX_IN_FLIGHT = 64;
// Attempts in flight per receiver origin: a slow or hanging receiver holds at most this many slots,
// so the others keep being served.
const MAX_PER_ORIGIN = 8;
// Safety net besides the wake-ups: picks up events written by another process (CLI) and anything a
// missed wake-up left behind.
const POLL_MS = 2000;
const MAX_SHUTDOWN_GRACE_MS = 2000;

export interface WorkerOptions {
  registry: DatabaseRegistry;
  /** The instance secret, which signs each delivery's JWT. */
  secret: string;
  timeoutMs: number;
  maxAttempts: number;
  backoffMs: number;
  log: Logger;
}

/**
 * Delivers outbox events of every database. A commit wakes it for its database; each pass claims due
 * events up to the concurrency limits and starts their attempts; each settled attempt writes its log
 * and wakes the pass again (the next event of the same record may now go). Backoff waits are timers.
 */
export class DeliveryWorker {
  private readonly sender: Sender;
  private readonly shutdown = new AbortController();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perOrigin = new Map<string, number>();
  private readonly passes = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private poller?: NodeJS.Timeout;
  private running = false;

  constructor(private readonly o: WorkerOptions) {
    this.sender = new Sender(o.timeoutMs);
  }

  /** Returns attempts a crashed process left claimed to the queue, then starts delivering. */
  async start(): Promise<void> {
    for (const { name } of this.o.registry.list()) {
      const requeued = await requeueInterrupted(await this.o.registry.get(name));
      if (requeued > 0) this.o.log.warn({ database: name, events: requeued }, 'webhook attempts interrupted by the last stop were queued again');
    }
    this.running = true;
    this.poller = setInterval(() => this.wakeAll(), POLL_MS);
    this.poller.unref();
    this.wakeAll();
  }

  wakeAll(): void {
    for (const { name } of this.o.registry.list()) this.wake(name);
  }

  /** Asks for a delivery pass over a database; passes of one database never overlap. */
  wake(dbName: string): void {
    if (!this.running) return;
    if (this.passes.has(dbName)) {
      this.again.add(dbName);
      return;
    }
    const pass = this.pass(dbName)
      .catch((err) => this.o.log.error({ err, database: dbName }, 'webhook delivery pass failed'))
      .finally(() => {
        this.passes.delete(dbName);
        if (this.again.delete(dbName)) this.wake(dbName);
      });
    this.passes.set(dbName, pass);
  }

  /**
   * Stops claiming, lets attempts in flight finish for up to half the timeout (at most 2 s), then
   * interrupts the rest, which go back to the queue without using up an attempt.
   */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.poller);
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    await Promise.allSettled([...this.passes.values()]);
    const attempts = [...this.inFlight.values()];
    if (attempts.length > 0) {
      const grace = setTimeout(() => this.shutdown.abort(), Math.min(MAX_SHUTDOWN_GRACE_MS, Math.floor(this.o.timeoutMs / 2)));
      await Promise.allSettled(attempts);
      clearTimeout(grace);
    }
    await this.sender.close();
  }

  private async pass(dbName: string): Promise<void> {
    const db = await this.o.registry.get(dbName);
    while (this.running) {
      const free = MAX_IN_FLIGHT - this.inFlight.size;
      // A finishing attempt wakes the pass again.
      if (free <= 0) return;
      const full = [...this.perOrigin].filter(([, n]) => n >= MAX_PER_ORIGIN).map(([origin]) => origin);
      const batch = new Map<string, number>();
      const rows = await claimDue(db, Date.now(), free, full, (row) => {
        const used = (this.perOrigin.get(row.origin) ?? 0) + (batch.get(row.origin) ?? 0);
        if (used >= MAX_PER_ORIGIN) return false;
        batch.set(row.origin, (batch.get(row.origin) ?? 0) + 1);
        return true;
      });
      for (const row of rows) this.launch(dbName, db, row);
      if (rows.length < free) break;
    }
    await this.armTimer(dbName, db);
  }

  /** Wakes the database when its next waiting event (a retry in backoff) becomes due. */
  private async armTimer(dbName: string, db: Database): Promise<void> {
    const now = Date.now();
    const due = await nextDue(db, now);
    clearTimeout(this.timers.get(dbName));
    this.timers.delete(dbName);
    if (due === undefined || !this.running) return;
    const wait = due - now;
    const timer = setTimeout(() => {
      this.timers.delete(dbName);
      this.wake(dbName);
    }, Math.min(wait, 2 ** 31 - 1));
    timer.unref();
    this.timers.set(dbName, timer);
  }

  private launch(dbName: string, db: Database, row: OutboxRow): void {
    this.perOrigin.set(row.origin, (this.perOrigin.get(row.origin) ?? 0) + 1);
    const attempt = (async () => {
      const result = await this.sender.send(requestFor(row, dbName, this.o.secret, new Date()), this.shutdown.signal);
      await this.settle(db, row, result);
    })()
      // The event stays claimed; the next start queues it again.
      .catch((err) => this.o.log.error({ err, database: dbName, eventId: row.id }, 'recording a webhook attempt failed'))
      .finally(() => {
        const n = (this.perOrigin.get(row.origin) ?? 1) - 1;
        if (n > 0) this.perOrigin.set(row.origin, n);
        else this.perOrigin.delete(row.origin);
        this.inFlight.delete(row.id);
        this.wake(dbName);
      });
    this.inFlight.set(row.id, attempt);
  }

  private async settle(db: Database, row: OutboxRow, result: DeliveryResult): Promise<void> {
    const now = new Date();
    const attempt = row.attempts + 1;
    let status: EventStatus;
    let attempts = attempt;
    let next = now.getTime();
    if (result.ok) status = 'success';
    else if (result.interrupted) {
      status = 'pending';
      attempts = row.attempts;
    } else if (attempt >= this.o.maxAttempts) status = 'failed';
    else {
      status = 'pending';
      next += backoffDelay(this.o.backoffMs, attempt);
    }
    await db.transaction(async (tx) => {
      await settleEvent(tx, row.id, status, attempts, next, now.toISOString());
      await insertLog(tx, {
        source: row.source,
        name: row.name,
        collection: row.collection,
        action: row.action,
        eventId: row.id,
        url: row.url,
        method: row.method,
        attempt,
        status: status === 'pending' ? 'retrying' : status === 'success' ? 'success' : 'failed',
        statusCode: result.statusCode,
        durationMs: result.durationMs,
        error: result.error,
        created: now.toISOString(),
      });
    });
  }
}
