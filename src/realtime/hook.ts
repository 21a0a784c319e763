import { changeHook, never, type RecordChangeHook } from '../records/deps.ts';
import type { ChangeFeed, RecordChange } from './feed.ts';

/**
 * The records change hook that feeds realtime. It runs inside the write's transaction, as every
 * record write path calls it (record API, cascades, workflow steps, OAuth2 sign-ups, batches), and
 * publishes only once that transaction commits: a rolled-back change never reaches a subscriber.
 */
export function realtimeChangeHook(feed: ChangeFeed): RecordChangeHook {
  return changeHook(never, async (tx, event) => {
    const change: RecordChange = {
      database: event.database,
      collectionId: event.collection.id,
      collectionName: event.collection.name,
      action: event.action,
      recordId: event.record.id,
    };
    if (event.action === 'delete') change.deleted = event.record;
    else change.record = event.record;
    tx.afterCommit(() => feed.publish(change));
  });
}
