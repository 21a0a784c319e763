import { backoffDelay } from '../lib/backoff.ts';
import type { Logger } from '../lib/logger.ts';
import type { Database, DatabaseRegistry } from '../storage/index.ts';
import { type DeliveryResult, requestFor, Sender } from './deliver.ts';
import { insertLog } from './logs.ts';
import { dueEvents, dueOrigins, type EventStatus, nextDue, type OutboxRow, settleEvent } from './outbox.ts';

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

/** Which origins of a database a pass should look at. */
type Wanted = Set<string> | 'all';

interface Settlement {
  row: OutboxRow;
  result: DeliveryResult;
  resolve(retryAt: number | undefined): void;
  reject(err: unknown): void;
}

/**
 * Delivers outbox events of every database. Work is found by receiver origin: a commit wakes the
 * origins of the events it wrote, a settled attempt wakes its own origin (the next event of the same
 * record may now go), and a backoff timer or the poll wakes every origin. A pass claims, per woken
 * origin, as many due events as that origin has free slots, so a backlog for a saturated receiver
 * costs nothing until one of its attempts ends.
 */
export class DeliveryWorker {
  private readonly sender: Sender;
  private readonly shutdown = new AbortController();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perOrigin = new Map<string, number>();
  private readonly passes = new Map<string, Promise<void>>();
  private readonly wanted = new Map<string, Wanted>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly settling = new Map<string, Settlement[]>();
  /** A pass left due work aside because all slots were taken: the next freed slot looks everywhere. */
  private starved = false;
  private poller?: NodeJS.Timeout;
  private running = false;

  constructor(private readonly o: WorkerOptions) {
    this.sender = new Sender(o.timeoutMs);
  }

  /** Starts delivering; whatever a previous process left pending (in flight when it died included) goes first. */
  start(): void {
    this.running = true;
    this.poller = setInterval(() => this.wakeAll(), POLL_MS);
    this.poller.unref();
    this.wakeAll();
  }

  /** Whether an attempt of that event is under way. */
  isInFlight(eventId: string): boolean {
    return this.inFlight.has(eventId);
  }

  wakeAll(): void {
    for (const { name } of this.o.registry.list()) this.wake(name);
  }

  /** Asks for a delivery pass over some origins of a database (all when none are named). */
  wake(dbName: string, origins?: Iterable<string>): void {
    if (!this.running) return;
    const current = this.wanted.get(dbName);
    if (origins === undefined) this.wanted.set(dbName, 'all');
    else if (current !== 'all') {
      const set = current ?? new Set<string>();
      for (const o of origins) set.add(o);
      this.wanted.set(dbName, set);
    }
    this.schedule(dbName);
  }

  /** Passes of one database never overlap; wake-ups during a pass are served by the next one. */
  private schedule(dbName: string): void {
    if (this.passes.has(dbName)) return;
    // On the next turn of the event loop, so the commits of one burst share a pass.
    const pass = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.pass(dbName))
      .catch((err) => this.o.log.error({ err, database: dbName }, 'webhook delivery pass failed'))
      .finally(() => {
        this.passes.delete(dbName);
        if (this.running && this.wanted.has(dbName)) this.schedule(dbName);
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
    for (const { timer } of this.timers.values()) clearTimeout(timer);
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
    const wanted = this.wanted.get(dbName);
    this.wanted.delete(dbName);
    if (!wanted || !this.running) return;
    const db = await this.o.registry.get(dbName);
    const origins = wanted === 'all' ? await dueOrigins(db, Date.now()) : wanted;
    for (const origin of origins) {
      const room = Math.min(MAX_IN_FLIGHT - this.inFlight.size, MAX_PER_ORIGIN - (this.perOrigin.get(origin) ?? 0));
      if (room <= 0) {
        // A saturated origin is woken by its own next settled attempt; others wait for any free slot.
        if (this.inFlight.size >= MAX_IN_FLIGHT) this.starved = true;
        continue;
      }
      // Events in flight are still pending: read past them.
      const busy = this.perOrigin.get(origin) ?? 0;
      for (const row of await dueEvents(db, origin, Date.now(), room + busy)) {
        if (!this.inFlight.has(row.id)) this.launch(dbName, db, row);
      }
      if (!this.running) return;
    }
    if (wanted === 'all') {
      const due = await nextDue(db, Date.now());
      if (due !== undefined) this.armTimer(dbName, due);
    }
  }

  /** Wakes the database when its next waiting event (a retry in backoff) becomes due. */
  private armTimer(dbName: string, at: number): void {
    const current = this.timers.get(dbName);
    if (!this.running || (current && current.at <= at)) return;
    clearTimeout(current?.timer);
    const timer = setTimeout(
      () => {
        this.timers.delete(dbName);
        this.wake(dbName);
      },
      Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1),
    );
    timer.unref();
    this.timers.set(dbName, { at, timer });
  }

  private launch(dbName: string, db: Database, row: OutboxRow): void {
    this.perOrigin.set(row.origin, (this.perOrigin.get(row.origin) ?? 0) + 1);
    const attempt = (async () => {
      const result = await this.sender.send(requestFor(row, dbName, this.o.secret, new Date()), this.shutdown.signal);
      const retryAt = await this.settle(dbName, db, row, result);
      if (retryAt !== undefined) this.armTimer(dbName, retryAt);
    })()
      // The event stays claimed; the next start queues it again.
      .catch((err) => this.o.log.error({ err, database: dbName, eventId: row.id }, 'recording a webhook attempt failed'))
      .finally(() => {
        const n = (this.perOrigin.get(row.origin) ?? 1) - 1;
        if (n > 0) this.perOrigin.set(row.origin, n);
        else this.perOrigin.delete(row.origin);
        this.inFlight.delete(row.id);
        if (this.starved) {
          this.starved = false;
          this.wakeAll();
        } else this.wake(dbName, [row.origin]);
      });
    this.inFlight.set(row.id, attempt);
  }

  /**
   * Records the attempt and the event's next state; resolves with when to retry, if it will be.
   * Attempts settling in the same turn of the event loop share one transaction: under load that is
   * one commit for many deliveries instead of one each.
   */
  private settle(dbName: string, db: Database, row: OutboxRow, result: DeliveryResult): Promise<number | undefined> {
    return new Promise((resolve, reject) => {
      let batch = this.settling.get(dbName);
      if (!batch) {
        batch = [];
        this.settling.set(dbName, batch);
        setImmediate(() => {
          const items = this.settling.get(dbName)!;
          this.settling.delete(dbName);
          this.writeSettlements(db, items).then(
            (retries) => items.forEach((item, i) => item.resolve(retries[i])),
            (err) => items.forEach((item) => item.reject(err)),
          );
        });
      }
      batch.push({ row, result, resolve, reject });
    });
  }

  private async writeSettlements(db: Database, items: Settlement[]): Promise<Array<number | undefined>> {
    const now = new Date();
    const iso = now.toISOString();
    return db.transaction(async (tx) => {
      const retries: Array<number | undefined> = [];
      for (const { row, result } of items) {
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
        await settleEvent(tx, row.id, status, attempts, next, iso);
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
          created: iso,
        });
        retries.push(status === 'pending' && !result.interrupted ? next : undefined);
      }
      return retries;
    });
  }
}
