import type { Database } from '../../storage/index.ts';
import { DELIVERY, OutcomeBatches, settle, shutdownGrace } from '../attempt.ts';
import { requestFor, Sender } from '../deliver.ts';
import type { Deliverer, WorkerOptions } from '../store.ts';
import type { OutboxRow, PendingRow, Settlement } from '../types.ts';
import { claimEvents, isLeased, OUTBOX_CHANNEL, releaseLeases, renewLeases, saveOutcomes } from './outbox.ts';

// Besides notices: picks up retries whose backoff ended and events whose lease expired on a dead node.
const POLL_MS = 1000;
/** How long after a failed write of outcomes it is tried again. */
const OUTCOME_RETRY_MS = 500;

/** The lease a node takes on the events it is about to attempt: long enough for a slow receiver. */
export function leaseMs(timeoutMs: number): number {
  return Math.max(15_000, 2 * timeoutMs + 5_000);
}

interface Claimed {
  database: string;
  db: Database;
  row: OutboxRow;
}

/**
 * Delivers the PostgreSQL outbox from any number of nodes. A pass over a database claims due events
 * with a lease (`claimEvents`) up to the free attempt slots; they wait per receiver origin for a slot, are
 * attempted, and their outcomes are written in batches, which releases the lease. Leases of events
 * held longer than a third of the lease are renewed; at shutdown the events held but not attempted are
 * handed back. Passes are started by notices of commits (any node's), by this node's own commits,
 * by written outcomes (the next event of a record may go) and by a poll.
 */
export class LeaseWorker implements Deliverer {
  private readonly sender: Sender;
  private readonly lease: number;
  private running = false;
  private readonly passes = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** Claimed events waiting for a slot of their origin. */
  private readonly waiting = new Map<string, Claimed[]>();
  private waitingCount = 0;
  private readonly perOrigin = new Map<string, number>();
  private readonly inFlight = new Map<number, Promise<void>>();
  /** Seqs this node holds a lease on (waiting, in flight or unsaved), per database. */
  private readonly held = new Map<string, Set<number>>();
  private readonly outcomes: OutcomeBatches;
  private timers: NodeJS.Timeout[] = [];
  private readonly retries = new Set<NodeJS.Timeout>();
  private unlisten: Array<() => void> = [];

  constructor(private readonly o: WorkerOptions) {
    this.sender = new Sender(o.timeoutMs, o.outbound);
    this.lease = o.leaseMs ?? leaseMs(o.timeoutMs);
    this.outcomes = new OutcomeBatches({
      write: (db, items) => saveOutcomes(db, items, o.node),
      written: (name, items, ok, db) => {
        // Not written (a deadlock with another node's or this node's lease update, a lost
        // connection): the events stay held, their leases renewed, and the write is tried again
        // shortly, since each record's next event waits behind its outcome. A node that stops first
        // hands them back, and they are attempted again.
        if (!ok) {
          if (this.running) this.retryOutcomes(name, db, items);
          return;
        }
        const held = this.heldOf(name);
        for (const item of items) held.delete(item.seq);
        // The next event of each record may go now.
        this.wake(name);
      },
      log: o.log,
    });
  }

  start(): void {
    this.running = true;
    const notices = this.o.registry.backend.notifications;
    if (notices) {
      this.unlisten.push(notices.listen(OUTBOX_CHANNEL, (database) => this.wake(database)));
      this.unlisten.push(notices.onResync(() => this.wakeAll()));
    }
    const poll = setInterval(() => this.wakeAll(), POLL_MS);
    const renew = setInterval(() => void this.renew(), Math.max(1000, Math.floor(this.lease / 3)));
    poll.unref();
    renew.unref();
    this.timers = [poll, renew];
    this.wakeAll();
  }

  committed(database: string, _rows: PendingRow[]): void {
    this.wake(database);
  }

  requeued(database: string, _row: PendingRow): void {
    this.wake(database);
  }

  async isInFlight(_database: string, db: Database, eventId: string): Promise<boolean> {
    return isLeased(db, eventId, Date.now());
  }

  private wakeAll(): void {
    for (const { name } of this.o.registry.list()) this.wake(name);
  }

  private wake(database: string): void {
    if (!this.running || !this.o.registry.has(database)) return;
    if (this.passes.has(database)) {
      this.again.add(database);
      return;
    }
    const pass = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.pass(database))
      .catch((err) => this.o.log.error({ err, database }, 'webhook delivery pass failed'))
      .finally(() => {
        this.passes.delete(database);
        if (this.again.delete(database)) this.wake(database);
      });
    this.passes.set(database, pass);
  }

  private heldOf(database: string): Set<number> {
    let set = this.held.get(database);
    if (!set) this.held.set(database, (set = new Set()));
    return set;
  }

  private async pass(database: string): Promise<void> {
    if (!this.running) return;
    const free = DELIVERY.maxInFlight - this.inFlight.size - this.waitingCount;
    if (free <= 0) return;
    const db = await this.o.registry.get(database);
    const now = Date.now();
    const rows = await claimEvents(db, this.o.node, now + this.lease, now, free);
    if (!this.running) {
      // Stopped while claiming: hand them straight back.
      await releaseLeases(db, this.o.node, rows.map((r) => r.seq));
      return;
    }
    const held = this.heldOf(database);
    for (const row of rows) {
      held.add(row.seq);
      const list = this.waiting.get(row.origin) ?? [];
      list.push({ database, db, row });
      this.waiting.set(row.origin, list);
      this.waitingCount++;
    }
    this.pump();
    // A full claim may have left more behind.
    if (rows.length === free) this.again.add(database);
  }

  /** Starts waiting attempts while their origins and the node have free slots. */
  private pump(): void {
    // Once stopping, claimed events wait to be handed back: an attempt started now would be neither
    // awaited by stop() nor interrupted, and would be sent while its lease is released.
    if (!this.running) return;
    for (const [origin, list] of this.waiting) {
      while (list.length > 0 && (this.perOrigin.get(origin) ?? 0) < DELIVERY.maxPerOrigin && this.inFlight.size < DELIVERY.maxInFlight) {
        const claimed = list.shift()!;
        this.waitingCount--;
        this.launch(claimed);
      }
      if (list.length === 0) this.waiting.delete(origin);
    }
  }

  private launch(c: Claimed): void {
    const origin = c.row.origin;
    this.perOrigin.set(origin, (this.perOrigin.get(origin) ?? 0) + 1);
    const attempt = this.attempt(c)
      .catch((err) => this.o.log.error({ err, database: c.database, eventId: c.row.id }, 'webhook attempt failed'))
      .finally(() => {
        const n = (this.perOrigin.get(origin) ?? 1) - 1;
        if (n > 0) this.perOrigin.set(origin, n);
        else this.perOrigin.delete(origin);
        this.inFlight.delete(c.row.seq);
        this.pump();
        // A free slot: more events may be claimed.
        if (this.running) this.wake(c.database);
      });
    this.inFlight.set(c.row.seq, attempt);
  }

  private async attempt(c: Claimed): Promise<void> {
    const result = await this.sender.send(requestFor(c.row, c.database, this.o.secret, new Date()));
    this.outcomes.add(c.database, c.db, settle(c.row, c.row.attempts, result, this.o));
  }

  private retryOutcomes(database: string, db: Database, items: Settlement[]): void {
    const timer = setTimeout(() => {
      this.retries.delete(timer);
      if (this.running) for (const item of items) this.outcomes.add(database, db, item);
    }, OUTCOME_RETRY_MS);
    timer.unref();
    this.retries.add(timer);
  }

  save(database?: string): Promise<void> {
    return this.outcomes.save(database);
  }

  /** Extends the leases of the events this node still holds. */
  private async renew(): Promise<void> {
    for (const [database, seqs] of this.held) {
      if (seqs.size === 0) continue;
      try {
        const db = await this.o.registry.get(database);
        await renewLeases(db, this.o.node, [...seqs], Date.now() + this.lease);
      } catch (err) {
        this.o.log.error({ err, database }, 'renewing webhook leases failed');
      }
    }
  }

  /**
   * Stops claiming, lets attempts in flight finish for up to half the timeout (at most 2 s, and at
   * most `graceMs`), then interrupts the rest; writes every outcome and hands back the leases of events not attempted.
   */
  async stop(graceMs?: number): Promise<void> {
    if (!this.running) return;
    this.running = false;
    for (const t of this.timers) clearInterval(t);
    for (const t of this.retries) clearTimeout(t);
    this.retries.clear();
    for (const off of this.unlisten.splice(0)) off();
    await Promise.allSettled([...this.passes.values()]);
    const attempts = [...this.inFlight.values()];
    if (attempts.length > 0) {
      const grace = setTimeout(() => void this.sender.interrupt(), shutdownGrace(this.o.timeoutMs, graceMs));
      await Promise.allSettled(attempts);
      clearTimeout(grace);
    }
    await this.save();
    for (const [database, seqs] of this.held) {
      try {
        await releaseLeases(await this.o.registry.get(database), this.o.node, [...seqs]);
      } catch (err) {
        this.o.log.error({ err, database }, 'handing back webhook leases failed; they expire by themselves');
      }
    }
    this.held.clear();
    this.waiting.clear();
    this.waitingCount = 0;
    await this.sender.close();
  }
}
