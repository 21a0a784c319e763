import type { OutboxStore } from '../store.ts';
import { LeaseWorker } from './lease-worker.ts';
import { findEvent, hasUnfinished, insertEvent, postgresOutboxStep, pruneFinished, requeueEvent, type TargetIds } from './outbox.ts';

/**
 * The PostgreSQL outbox, shared by every node of an instance: events claimed with leases
 * (`outbox.ts`) by each node's `LeaseWorker`.
 */
export function postgresOutbox(): OutboxStore {
  // Target row ids per database name; an id that went stale is looked up again (see outbox.ts's INSERT).
  const targetIds = new Map<string, TargetIds>();
  const idsOf = (database: string): TargetIds => {
    let ids = targetIds.get(database);
    if (!ids) targetIds.set(database, (ids = new Map()));
    return ids;
  };
  return {
    steps: [postgresOutboxStep],
    insert: (tx, database, entry, now) => insertEvent(tx, idsOf(database), entry, now),
    find: findEvent,
    requeue: requeueEvent,
    hasUnfinished,
    pruneFinished,
    worker: (options) => new LeaseWorker(options),
  };
}
