import type { Logger } from '../lib/logger.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import type { Database, DatabaseRegistry, Queryable, SchemaStep, Transaction } from '../storage/index.ts';
import type { OutboxEntry, OutboxRow, PendingRow } from './types.ts';

export interface WorkerOptions {
  registry: DatabaseRegistry;
  /** The instance secret, which signs each delivery's JWT. */
  secret: string;
  timeoutMs: number;
  /** Where deliveries may not go (API contract §20); by default link-local and metadata addresses. */
  outbound?: OutboundPolicy;
  maxAttempts: number;
  backoffMs: number;
  /** How long a due event may wait while the event loop is saturated (0: never). */
  maxDeferMs: number;
  /** This process, as webhook logs name it (several nodes share one database). */
  node: string;
  /** Lease on events being attempted (PostgreSQL); by default from the timeout. */
  leaseMs?: number;
  log: Logger;
}

/** Delivers the outbox events of every database in the background. */
export interface Deliverer {
  start(): void;
  /**
   * Stops starting attempts, ends those in flight (after at most `graceMs`, and never later than the
   * worker's own limit), writes every outcome and hands back what it held.
   */
  stop(graceMs?: number): Promise<void>;
  /** Events that just committed in this process (a hint: delivery does not depend on it). */
  committed(database: string, rows: PendingRow[]): void;
  /** An event queued again (retry of a log). */
  requeued(database: string, row: PendingRow): void;
  /** Whether an attempt of that event is under way (on any node). */
  isInFlight(database: string, db: Database, eventId: string): Promise<boolean>;
  /** Writes the outcomes of attempts made so far (of one database, or all). */
  save(database?: string): Promise<void>;
}

/**
 * The outbox of one storage driver, the seam between the service and storage: how events are
 * written in their change's transaction, found, queued again and pruned, and the worker that
 * delivers them. SQLite's (`sqlite/store.ts`) keeps the pending events of its single process in
 * memory; PostgreSQL's (`postgres/store.ts`) lets any number of nodes claim events with leases. The
 * service imports only this file; nothing here imports an implementation.
 */
export interface OutboxStore {
  /** Its tables, as steps of every database's internal schema. */
  readonly steps: readonly SchemaStep[];
  insert(tx: Transaction, database: string, entry: OutboxEntry, now: Date): Promise<PendingRow>;
  /** The event of a log: by its seq, checked against its id. */
  find(db: Queryable, seq: number, id: string): Promise<OutboxRow | undefined>;
  /** Queues an event again with a fresh attempt budget, due now. */
  /** False when the event is being sent right now (held by a node's lease). */
  requeue(db: Database, seq: number, now: Date): Promise<boolean>;
  /** Whether an event of that order key is still waiting or being sent (cron overlap check). */
  hasUnfinished(q: Queryable, orderKey: string): Promise<boolean>;
  /** Deletes finished events last touched before `before` (ISO). */
  pruneFinished(db: Database, before: string): Promise<number>;
  worker(options: WorkerOptions): Deliverer;
}
