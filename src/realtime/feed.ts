import type { RecordJson } from '../records/serialize.ts';

/**
 * One committed record change, as small as a node that did not make the write needs it: which record
 * changed and how. A broadcaster reads a created or updated record itself (it is committed, so every
 * node sees it); only a delete carries the record, since its row is gone.
 */
export interface RecordChange {
  /** Database name (`x-dbname`). */
  database: string;
  collectionId: string;
  collectionName: string;
  action: 'create' | 'update' | 'delete';
  recordId: string;
  /** Deletes only: the record as an administrator saw it just before it went. */
  deleted?: RecordJson;
  /**
   * Creates and updates, in the process that made the write only (never across nodes): the record as
   * committed, for when it is deleted again before its message is built. Other nodes read the row.
   */
  record?: RecordJson;
}

export type ChangeListener = (change: RecordChange) => void;

/**
 * How committed record changes reach the realtime broadcaster: the one seam between the nodes of an
 * instance and the rule and wire code. `publish` is called once per change after its transaction
 * commits, in commit order; every subscribed listener (on this node, and on every other node for a
 * feed that spans nodes) gets each change once, in the order it was published.
 */
export interface ChangeFeed {
  publish(change: RecordChange): void;
  /** Adds a listener; the function returned removes it. */
  subscribe(listener: ChangeListener): () => void;
  /** Stops delivering; the feed is not used afterwards. */
  close(): Promise<void>;
}

/** The feed of one process: listeners are called synchronously from `publish`. */
export class LocalChangeFeed implements ChangeFeed {
  private readonly listeners = new Set<ChangeListener>();

  /** Whether anyone listens (a feed that does work per change can skip it otherwise). */
  protected get listening(): boolean {
    return this.listeners.size > 0;
  }

  publish(change: RecordChange): void {
    for (const listener of this.listeners) listener(change);
  }

  subscribe(listener: ChangeListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }
}
