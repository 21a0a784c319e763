import type { OutboxStore } from '../store.ts';
import {
  findEvent,
  hasUnfinished,
  insertEvent,
  outboxChangeStep,
  outboxTableStep,
  outboxV2Step,
  outboxV3Step,
  outboxV4Step,
  pruneFinished,
  requeueEvent,
  type TargetIds,
} from './outbox.ts';
import { DeliveryWorker } from './worker.ts';

/**
 * The SQLite outbox: one process delivers, keeping pending events in memory (`worker.ts`); the
 * table is read by seq from the low watermark (`outbox.ts`).
 */
export function sqliteOutbox(): OutboxStore {
  // Target row ids per database name; an id that went stale is looked up again (see outbox.ts's INSERT).
  const targetIds = new Map<string, TargetIds>();
  const idsOf = (database: string): TargetIds => {
    let ids = targetIds.get(database);
    if (!ids) targetIds.set(database, (ids = new Map()));
    return ids;
  };
  return {
    steps: [outboxTableStep, outboxV2Step, outboxV3Step, outboxV4Step, outboxChangeStep],
    insert: (tx, database, entry, now) => insertEvent(tx, idsOf(database), entry, now),
    find: findEvent,
    requeue: requeueEvent,
    hasUnfinished,
    pruneFinished,
    worker: (options) => new DeliveryWorker(options),
  };
}
