import { performance } from 'node:perf_hooks';
import type { Database } from '../../storage/index.ts';
import { DELIVERY, OutcomeBatches, settle, shutdownGrace } from '../attempt.ts';
import { requestFor, Sender } from '../deliver.ts';
import type { Deliverer, WorkerOptions } from '../store.ts';
import type { OutboxRow, PendingRow, Settlement } from '../types.ts';
import { eventsBySeq, loadPending, saveOutcomes } from './outbox.ts';
import { DeliveryPacer, PACE_WINDOW_MS, type Pacer } from './pacer.ts';
import { PendingQueue, QUEUE_LIMIT, type QueuedEvent } from './queue.ts';

// Safety net besides the wake-ups, over the open databases: anything a missed wake-up left behind.
// A database not open in this process gets no new events (a write opens it); what a previous process
// left in one is found at start (`start`, through registry.peek).
const POLL_MS = 2000;
// Most pending events one pass reads from the outbox while attempts are deferred (see `fill`).
const DEFERRED_READ = 256;
// Most bytes of event bodies kept in memory for events waiting for their first attempt (see
// `attach`); past it, an attempt reads its event from the outbox, as retries always do.
const ROW_BUDGET = 16 * 1024 * 1024;

function rowBytes(row: OutboxRow): number {
  return (row.change?.length ?? 0) + (row.body?.length ?? 0) + 512;
}

/** Which origins of a database a pass should look at; `all` also reads the outbox for new events. */
type Wanted = Set<string> | 'all';

const NONE: Promise<Map<number, OutboxRow>> = Promise.resolve(new Map());

function queued(row: PendingRow): QueuedEvent {
  return { seq: row.seq, id: row.id, origin: row.origin, orderKey: row.orderKey, due: row.nextAttemptAt, attempts: row.attempts, inFlight: false };
}

/**
 * Delivers outbox events of every database. It keeps the pending events of each database in memory
 * (PendingQueue): committed events are handed over by the change hook after commit, anything else
 * (a restart, another process, a backlog beyond the queue's limit) is read from the outbox by seq.
 * Work is found per receiver origin: a commit wakes the origins of its events, a finished attempt its
 * own origin (the next event of that record may now go), backoff timers and the poll wake all. An
 * event stays `pending` in the outbox until its attempt's outcome is written, so a crash leaves it to
 * the next start.
 */
export class DeliveryWorker implements Deliverer {
  private readonly sender: Sender;
  private readonly queues = new Map<string, PendingQueue>();
  private readonly inFlight = new Map<string, Promise<void>>();
  private readonly perOrigin = new Map<string, number>();
  private readonly passes = new Map<string, Promise<void>>();
  private readonly wanted = new Map<string, Wanted>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly outcomes: OutcomeBatches;
  /** Seqs of events settled in memory whose outcome is not yet in the outbox, per database. */
  private readonly unsaved = new Map<string, Set<number>>();
  /** Saves finished so far: a read of the outbox that a save overtook may hold outcomes it misses (see `fill`). */
  private saves = 0;
  /** Bytes of the rows attached to queued events (see `attach`). */
  private heldBytes = 0;
  /** A pass left due work aside because all slots were taken: the next freed slot looks everywhere. */
  private starved = false;
  private poller?: NodeJS.Timeout;
  private gauge?: NodeJS.Timeout;
  private readonly pacer: Pacer;
  /** Events committed in the current pacing window. */
  private written = 0;
  private running = false;

  constructor(private readonly o: WorkerOptions & { pacer?: Pacer }) {
    this.sender = new Sender(o.timeoutMs, o.outbound);
    this.pacer = o.pacer ?? new DeliveryPacer(o.maxDeferMs);
    this.outcomes = new OutcomeBatches({
      write: saveOutcomes,
      // Written or not, they are no longer unsaved: a failed write leaves them pending in the
      // outbox, from where they are read and attempted again.
      written: (name, items) => {
        const unsaved = this.unsavedOf(name);
        for (const item of items) unsaved.delete(item.seq);
        this.saves++;
      },
      log: o.log,
    });
  }

  /** Starts delivering; whatever a previous process left pending (in flight when it died included) goes first. */
  start(): void {
    this.running = true;
    this.poller = setInterval(() => this.wakeAll(), POLL_MS);
    this.poller.unref();
    let last = performance.eventLoopUtilization();
    this.gauge = setInterval(() => {
      const current = performance.eventLoopUtilization();
      // Deferred events are picked up as soon as the load drops.
      if (this.pacer.sample(performance.eventLoopUtilization(current, last).utilization, this.written)) this.wakeAll();
      last = current;
      this.written = 0;
    }, PACE_WINDOW_MS);
    this.gauge.unref();
    this.wakeAll();
    void this.findLeftovers();
  }

  /** Wakes the databases not yet open whose outbox holds pending events (left by a previous process):
   * asked through registry.peek, so those without any stay closed. */
  private async findLeftovers(): Promise<void> {
    for (const { name } of this.o.registry.list()) {
      if (!this.running) return;
      if (this.o.registry.opened(name)) continue;
      const pending = await this.o.registry.peek(name, async (q) => (await loadPending(q, 0, 1)).rows.length > 0, true);
      if (pending) this.wake(name);
    }
  }

  /** Whether an attempt of that event is under way (one process delivers, so its memory knows). */
  async isInFlight(_database: string, _db: Database, eventId: string): Promise<boolean> {
    return this.inFlight.has(eventId);
  }

  /** Wakes every open database (see POLL_MS). */
  wakeAll(): void {
    for (const name of this.o.registry.openedNames()) this.wake(name);
  }

  /** Hands over events that just committed (from the change hook's afterCommit). */
  committed(dbName: string, rows: PendingRow[]): void {
    if (!this.running) return;
    this.written += rows.length;
    const q = this.queues.get(dbName);
    // Not read yet: the first pass reads them from the outbox.
    if (!q) return this.wake(dbName);
    if (this.pacer.isDeferring) {
      // Saturated: the events wait in the outbox rather than in memory (less work and garbage per
      // request while the requests need the loop), and no pass is needed before they are overdue or
      // the load drops; that pass reads them back, in order.
      q.leaveInOutbox();
      return this.armTimer(dbName, rows[0].nextAttemptAt + this.o.maxDeferMs);
    }
    for (const row of rows) {
      const e = queued(row);
      q.offer(e);
      if (row.row && q.get(row.seq) === e) this.attach(e, row.row);
    }
    // An event the queue could not take is read back from the outbox by a full pass.
    this.wake(dbName, q.complete ? rows.map((r) => r.origin) : undefined);
  }

  /** An event put back in the queue (retry of a log): due now, with a fresh set of attempts. */
  requeued(dbName: string, row: PendingRow): void {
    const q = this.queues.get(dbName);
    if (!this.running || !q) return;
    const existing = q.get(row.seq);
    if (existing) {
      existing.due = row.nextAttemptAt;
      existing.attempts = row.attempts;
    } else if (row.seq <= q.loadedUpTo) q.insert(queued(row));
    this.wake(dbName, [row.origin]);
  }

  /** Asks for a delivery pass over some origins of a database (all, and a read of the outbox, when none are named). */
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

  /** Writes the settled attempts of a database now (of all databases without a name); resolves once
   * everything settled so far is in the outbox. */
  save(dbName?: string): Promise<void> {
    return this.outcomes.save(dbName);
  }

  /**
   * Stops starting attempts, lets those in flight finish for up to half the timeout (at most 2 s, and
   * at most `graceMs`), then interrupts the rest, which stay pending without using up an attempt; writes every outcome.
   */
  async stop(graceMs?: number): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearInterval(this.poller);
    clearInterval(this.gauge);
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled([...this.passes.values()]);
    const attempts = [...this.inFlight.values()];
    if (attempts.length > 0) {
      const grace = setTimeout(() => void this.sender.interrupt(), shutdownGrace(this.o.timeoutMs, graceMs));
      await Promise.allSettled(attempts);
      clearTimeout(grace);
    }
    await this.save();
    await this.sender.close();
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

  private queueOf(dbName: string): PendingQueue {
    let q = this.queues.get(dbName);
    if (!q) this.queues.set(dbName, (q = new PendingQueue()));
    return q;
  }

  private unsavedOf(dbName: string): Set<number> {
    let set = this.unsaved.get(dbName);
    if (!set) this.unsaved.set(dbName, (set = new Set()));
    return set;
  }

  /**
   * Reads pending events past what the queue holds, up to its limit. Events settled in memory but not
   * yet saved still read as pending: they are left out. (An event offered while this reads may be
   * dropped by the offer; the offer then asked for another pass of this kind, which reads it.)
   */
  private async fill(dbName: string, db: Database, q: PendingQueue, now: number): Promise<void> {
    let room = QUEUE_LIMIT - q.size;
    if (this.pacer.isDeferring) {
      // Only overdue events may start now, and those are the oldest. Once the queue holds an event
      // waiting for its first attempt that is not overdue, every event after it in the outbox is
      // younger still, so nothing is read (its own deferral timer brings the next pass); until then
      // a few rows at a time. Read whole, the backlog the requests are adding to cost the loop tens
      // of milliseconds per pass.
      if (q.hasFirstAttemptWaitingSince(now - this.o.maxDeferMs)) return;
      room = Math.min(room, DEFERRED_READ);
    }
    if (room <= 0) return;
    const saves = this.saves;
    const { rows, top } = await loadPending(db, q.loadedUpTo, room);
    const unsaved = this.unsavedOf(dbName);
    // A save that finished while this read ran may have settled some of these rows after the read saw
    // them pending, and no longer lists them as unsaved: their attempts then read them again, which
    // skips any that are settled.
    const fresh = saves === this.saves;
    for (const row of rows) {
      if (unsaved.has(row.seq)) continue;
      const e = queued(row);
      q.insert(e);
      if (fresh && q.get(row.seq) === e) this.attach(e, row);
    }
    if (rows.length === room) {
      q.loadedUpTo = rows[rows.length - 1].seq;
      q.complete = false;
    } else {
      q.loadedUpTo = Math.max(q.loadedUpTo, top);
      q.complete = true;
    }
  }

  private async pass(dbName: string): Promise<void> {
    const wanted = this.wanted.get(dbName);
    this.wanted.delete(dbName);
    if (!wanted || !this.running) return;
    const db = await this.o.registry.get(dbName);
    const q = this.queueOf(dbName);
    const now = Date.now();
    if (wanted === 'all') await this.fill(dbName, db, q, now);
    let deferredUntil = Infinity;
    const starting: QueuedEvent[] = [];
    for (const origin of wanted === 'all' ? q.origins() : wanted) {
      const free = DELIVERY.maxInFlight - this.inFlight.size - starting.length;
      const room = Math.min(free, DELIVERY.maxPerOrigin - (this.perOrigin.get(origin) ?? 0));
      if (room <= 0) {
        // A saturated origin is woken by its own next finished attempt; others wait for any free slot.
        if (free <= 0) this.starved = true;
        continue;
      }
      for (const e of q.startable(origin, now, room)) {
        if (this.pacer.mayStart(now - e.due)) {
          // Taken now, so that neither this loop nor the next pass counts it as startable.
          this.take(e);
          starting.push(e);
        } else deferredUntil = Math.min(deferredUntil, e.due + this.o.maxDeferMs);
      }
    }
    if (starting.length > 0) {
      // Events whose row the worker holds are sent without reading it back.
      const unread = starting.filter((e) => e.row === undefined);
      const rows = unread.length > 0 ? eventsBySeq(db, unread.map((e) => e.seq)) : NONE;
      for (const e of starting) this.launch(dbName, db, q, e, rows);
    }
    if (deferredUntil < Infinity) this.armTimer(dbName, deferredUntil);
    if (wanted === 'all') {
      const due = q.nextDue(now);
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

  /**
   * Keeps an event's row with it until its first attempt, so the attempt need not read it from the
   * outbox (a read per pass cost a delivery about a tenth of its CPU): rows the change hook wrote or
   * a pass read whole, within ROW_BUDGET bytes, so a backlog of large records stays in the outbox.
   */
  private attach(e: QueuedEvent, row: OutboxRow): void {
    const bytes = rowBytes(row);
    if (this.heldBytes + bytes > ROW_BUDGET) return;
    this.heldBytes += bytes;
    e.row = row;
  }

  /** The row an attempt sends, taken from its event (it is not kept for a retry). */
  private detach(e: QueuedEvent): OutboxRow | undefined {
    const row = e.row;
    if (row) {
      this.heldBytes -= rowBytes(row);
      e.row = undefined;
    }
    return row;
  }

  /** Holds a slot of the event's origin for it. */
  private take(e: QueuedEvent): void {
    e.inFlight = true;
    this.perOrigin.set(e.origin, (this.perOrigin.get(e.origin) ?? 0) + 1);
  }

  /** Starts the attempt of an event `take` has given a slot; `rows` is the read of its pass's events. */
  private launch(dbName: string, db: Database, q: PendingQueue, e: QueuedEvent, rows: Promise<Map<number, OutboxRow>>): void {
    const attempt = this.attempt(dbName, db, q, e, rows)
      .catch((err) => {
        e.inFlight = false;
        this.o.log.error({ err, database: dbName, eventId: e.id }, 'webhook attempt failed');
      })
      .finally(() => {
        const n = (this.perOrigin.get(e.origin) ?? 1) - 1;
        if (n > 0) this.perOrigin.set(e.origin, n);
        else this.perOrigin.delete(e.origin);
        this.inFlight.delete(e.id);
        if (this.starved || (!q.complete && q.size < QUEUE_LIMIT / 2)) {
          this.starved = false;
          this.wakeAll();
        } else this.wake(dbName, [e.origin]);
      });
    this.inFlight.set(e.id, attempt);
  }

  /**
   * One attempt. Its outcome takes effect in memory at once (the slot is freed, the record's next
   * event may go) and reaches the outbox with the next saved batch.
   */
  private async attempt(dbName: string, db: Database, q: PendingQueue, e: QueuedEvent, rows: Promise<Map<number, OutboxRow>>): Promise<void> {
    const row = this.detach(e) ?? (await rows).get(e.seq);
    if (row?.status !== 'pending') {
      // Already settled: a copy read back from the outbox before its outcome was saved.
      q.remove(e);
      return;
    }
    const result = await this.sender.send(requestFor(row, dbName, this.o.secret, new Date()));
    const s = settle(row, e.attempts, result, this.o);
    e.inFlight = false;
    if (s.status === 'pending') {
      e.attempts = s.attempts;
      e.due = s.next;
      if (!result.interrupted) this.armTimer(dbName, s.next);
    } else q.remove(e);
    this.queueSave(dbName, db, s);
  }

  /**
   * Adds a settled attempt to its database's next batch (OutcomeBatches). Until it is written the
   * event is listed as unsaved, so that reading the outbox does not take it for pending.
   */
  private queueSave(dbName: string, db: Database, s: Settlement): void {
    this.unsavedOf(dbName).add(s.seq);
    this.outcomes.add(dbName, db, s);
  }
}
