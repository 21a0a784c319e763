import type { OutboxRow } from '../types.ts';

/** What the delivery worker keeps in memory about a pending outbox event. */
export interface QueuedEvent {
  seq: number;
  id: string;
  origin: string;
  orderKey: string;
  /** When the next attempt may start (ms since epoch). */
  due: number;
  /** Attempts made so far. The worker's count is ahead of the outbox until its batch is saved. */
  attempts: number;
  inFlight: boolean;
  /** The whole event while it waits for its first attempt, when the worker had it at hand (see
   * DeliveryWorker.attach); otherwise the attempt reads it. */
  row?: OutboxRow;
  /** Set once removed from the queue (a removed event is never put back; a requeue is a new one). */
  removed?: boolean;
}

/** Most pending events of one database held in memory; the rest wait in the outbox, loaded in order as
 * room frees up (a receiver down for days must not fill the process's memory). */
export const QUEUE_LIMIT = 10_000;

function insertSorted(list: QueuedEvent[], from: number, e: QueuedEvent): void {
  let i = list.length;
  while (i > from && list[i - 1].seq > e.seq) i--;
  list.splice(i, 0, e);
}

/**
 * One receiver's events in seq order. A backlog to one receiver runs to thousands, and its events
 * finish near the front, a few at a time: removing each with a splice would move the whole array
 * every time (quadratic over a drain). So removed events are skipped and dropped in bulk: from the
 * front as it advances, everywhere once they are the majority.
 */
class OriginList {
  private items: QueuedEvent[] = [];
  private head = 0;
  private live = 0;

  get size(): number {
    return this.live;
  }

  insert(e: QueuedEvent): void {
    insertSorted(this.items, this.head, e);
    this.live++;
  }

  /** Accounts for an event of this list that was just marked removed. */
  dropped(): void {
    this.live--;
    while (this.head < this.items.length && this.items[this.head].removed) this.head++;
    const held = this.items.length - this.head;
    if (this.live === 0 || held > 2 * this.live + 64 || this.head > held) {
      this.items = this.items.slice(this.head).filter((e) => !e.removed);
      this.head = 0;
    }
  }

  *[Symbol.iterator](): Iterator<QueuedEvent> {
    for (let i = this.head; i < this.items.length; i++) if (!this.items[i].removed) yield this.items[i];
  }
}

/**
 * The pending events of one database, indexed the way the worker asks: per receiver origin (what can
 * go to this receiver now?) and per order key (is this the earliest pending event of its record?).
 * It holds every pending event with `seq <= loadedUpTo` (up to QUEUE_LIMIT); `complete` says whether
 * `loadedUpTo` is the outbox's last seq, so that the next committed event (`loadedUpTo + 1`) can be
 * added directly instead of being read back from the database.
 */
export class PendingQueue {
  private readonly bySeq = new Map<number, QueuedEvent>();
  private readonly byOrigin = new Map<string, OriginList>();
  private readonly byKey = new Map<string, QueuedEvent[]>();
  loadedUpTo = 0;
  complete = false;

  get size(): number {
    return this.bySeq.size;
  }

  has(seq: number): boolean {
    return this.bySeq.has(seq);
  }

  get(seq: number): QueuedEvent | undefined {
    return this.bySeq.get(seq);
  }

  /** Adds an event read from the outbox or requeued (any position). */
  insert(e: QueuedEvent): void {
    if (this.bySeq.has(e.seq)) return;
    this.bySeq.set(e.seq, e);
    (this.byOrigin.get(e.origin) ?? this.byOrigin.set(e.origin, new OriginList()).get(e.origin)!).insert(e);
    insertSorted(this.byKey.get(e.orderKey) ?? this.byKey.set(e.orderKey, []).get(e.orderKey)!, 0, e);
  }

  /**
   * A just-committed event. Taken when it directly follows what is loaded; otherwise (another process
   * wrote in between, or the queue is full) the queue stops being complete and the next load reads
   * the outbox from `loadedUpTo` on.
   */
  offer(e: QueuedEvent): void {
    if (e.seq <= this.loadedUpTo) return;
    if (this.complete && e.seq === this.loadedUpTo + 1 && this.size < QUEUE_LIMIT) {
      this.insert(e);
      this.loadedUpTo = e.seq;
    } else this.complete = false;
  }

  /** A just-committed event not taken: the next load reads it, with everything after `loadedUpTo`. */
  leaveInOutbox(): void {
    this.complete = false;
  }

  remove(e: QueuedEvent): void {
    if (this.bySeq.get(e.seq) !== e) return;
    this.bySeq.delete(e.seq);
    e.removed = true;
    const list = this.byOrigin.get(e.origin)!;
    list.dropped();
    if (list.size === 0) this.byOrigin.delete(e.origin);
    // One record's events: a handful, so a plain splice.
    const same = this.byKey.get(e.orderKey)!;
    same.splice(same.indexOf(e), 1);
    if (same.length === 0) this.byKey.delete(e.orderKey);
  }

  origins(): string[] {
    return [...this.byOrigin.keys()];
  }

  /** Up to `limit` events of `origin` that may start now: due, not in flight, first of their key. */
  startable(origin: string, now: number, limit: number): QueuedEvent[] {
    const out: QueuedEvent[] = [];
    for (const e of this.byOrigin.get(origin) ?? []) {
      if (out.length >= limit) break;
      if (!e.inFlight && e.due <= now && this.byKey.get(e.orderKey)![0] === e) out.push(e);
    }
    return out;
  }

  /** Whether some event that waits for its first attempt (none made, none in flight) became due after `since`. */
  hasFirstAttemptWaitingSince(since: number): boolean {
    for (const e of this.bySeq.values()) if (e.attempts === 0 && !e.inFlight && e.due > since) return true;
    return false;
  }

  /** The earliest time after `now` at which a waiting event becomes due. */
  nextDue(now: number): number | undefined {
    let next: number | undefined;
    for (const e of this.bySeq.values()) if (!e.inFlight && e.due > now && (next === undefined || e.due < next)) next = e.due;
    return next;
  }
}
