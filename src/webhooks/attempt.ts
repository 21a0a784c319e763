import { backoffDelay } from '../lib/backoff.ts';
import type { Logger } from '../lib/logger.ts';
import type { Database } from '../storage/index.ts';
import type { DeliveryResult } from './deliver.ts';
import type { EventStatus, OutboxRow, Settlement } from './types.ts';

/**
 * What both workers share about an attempt: the limits they keep (DELIVERY), what an attempt's
 * result means for its event (`settle`), and how outcomes reach the store in batches
 * (`OutcomeBatches`).
 */

/** Limits every delivery worker keeps. */
export const DELIVERY = {
  /** Attempts in flight at once, over all databases and receivers: bounds sockets and memory whatever the backlog. */
  maxInFlight: 64,
  /** Attempts in flight per receiver origin: a slow or hanging receiver holds at most this many slots, so the others keep being served. */
  maxPerOrigin: 8,
  /** At shutdown, attempts in flight get at most this long (and half the timeout) before they are interrupted. */
  maxShutdownGraceMs: 2000,
  /** Outcomes are written together: idle, within 10 ms of the attempt; busy, many per commit. */
  saveDelayMs: 10,
  saveBatch: 256,
} as const;

/** How long attempts in flight may go on at shutdown: half the timeout, at most maxShutdownGraceMs,
 * and no longer than the server's own shutdown allows (`budgetMs`). */
export function shutdownGrace(timeoutMs: number, budgetMs = Infinity): number {
  return Math.max(0, Math.min(DELIVERY.maxShutdownGraceMs, Math.floor(timeoutMs / 2), budgetMs));
}

export interface AttemptPolicy {
  maxAttempts: number;
  backoffMs: number;
  /** The node that made the attempt (webhook logs name it). */
  node: string;
}

/**
 * What an attempt means for its event, the same for every worker: success; a retry after the backoff
 * of its number; failed after the last attempt; or, stopped by shutdown rather than by the receiver,
 * pending again without using up an attempt.
 */
export function settle(row: OutboxRow, attemptsBefore: number, result: DeliveryResult, policy: AttemptPolicy, now = new Date()): Settlement {
  const attempt = attemptsBefore + 1;
  let status: EventStatus;
  let attempts = attempt;
  let next = now.getTime();
  if (result.ok) status = 'success';
  else if (result.interrupted) {
    status = 'pending';
    attempts = attemptsBefore;
  } else if (attempt >= policy.maxAttempts) status = 'failed';
  else {
    status = 'pending';
    next += backoffDelay(policy.backoffMs, attempt);
  }
  return {
    seq: row.seq,
    status,
    attempts,
    next,
    log: {
      source: row.source,
      name: row.name,
      collection: row.collection,
      action: row.action,
      eventId: row.id,
      eventSeq: row.seq,
      url: row.url,
      method: row.method,
      attempt,
      status: status === 'pending' ? 'retrying' : status,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      node: policy.node,
      created: now.toISOString(),
    },
  };
}

interface Batch {
  db: Database;
  items: Settlement[];
  timer: NodeJS.Timeout;
}

export interface OutcomeBatchesOptions {
  /** The store's write of a batch (events' state and logs, in one transaction). */
  write(db: Database, items: Settlement[]): Promise<void>;
  /** Told of each batch once its write has ended; `ok` when it committed. */
  written(database: string, items: Settlement[], ok: boolean, db: Database): void;
  log: Logger;
}

/**
 * Outcomes waiting to be written, per database: a batch is written DELIVERY.saveDelayMs after its
 * first outcome, or at once when DELIVERY.saveBatch are waiting. A crash before the write means the
 * attempts are made again: delivery is at least once.
 */
export class OutcomeBatches {
  private readonly batches = new Map<string, Batch>();
  private readonly writing = new Set<Promise<void>>();

  constructor(private readonly o: OutcomeBatchesOptions) {}

  add(database: string, db: Database, outcome: Settlement): void {
    let batch = this.batches.get(database);
    if (!batch) {
      const timer = setTimeout(() => void this.save(database), DELIVERY.saveDelayMs);
      batch = { db, items: [], timer };
      this.batches.set(database, batch);
    }
    batch.items.push(outcome);
    if (batch.items.length >= DELIVERY.saveBatch) void this.save(database);
  }

  /** Writes the waiting outcomes of a database now (of all databases without a name); resolves once
   * every write started so far has ended. */
  async save(database?: string): Promise<void> {
    for (const name of database === undefined ? [...this.batches.keys()] : [database]) {
      const batch = this.batches.get(name);
      if (!batch) continue;
      this.batches.delete(name);
      clearTimeout(batch.timer);
      let ok = false;
      const written: Promise<void> = this.o
        .write(batch.db, batch.items)
        .then(() => {
          ok = true;
        })
        .catch((err) => this.o.log.error({ err, database: name }, 'saving webhook attempts failed; they will be made again'))
        .finally(() => {
          this.writing.delete(written);
          this.o.written(name, batch.items, ok, batch.db);
        });
      this.writing.add(written);
    }
    await Promise.allSettled([...this.writing]);
  }
}
