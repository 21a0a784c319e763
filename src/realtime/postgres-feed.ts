import type { CollectionService } from '../collections/service.ts';
import type { RecordJson } from '../records/serialize.ts';
import { serializeRecord } from '../records/serialize.ts';
import { shapeOf } from '../records/shape.ts';
import { PRIVILEGED_VIEWER } from '../records/viewer.ts';
import type { DatabaseRegistry, Notifications } from '../storage/index.ts';
import { LocalChangeFeed, type RecordChange } from './feed.ts';

const CHANNEL = 'cairn_records';
// A delete too big for a notice is kept this long for the nodes to read it.
const KEEP_DELETES_MS = 5 * 60_000;

interface Notice {
  /** The node whose connection made the change (its CAIRN_NODE_ID). */
  n: string | null;
  /** Schema (the database), table (the collection), action, record id. */
  s: string;
  t: string;
  a: RecordChange['action'];
  r: string;
  /** A delete's row as it was (secrets left out), or `ref`, the `_realtime_deletes` row holding it. */
  x?: Record<string, unknown>;
  ref?: number;
}

/**
 * The change feed of nodes sharing a PostgreSQL database. A node's own changes reach its listeners
 * as on SQLite, from `publish` right after commit, before the write is answered. Every collection
 * table also has a trigger that sends each committed row change as a notice (`cairn_records`: the
 * node that made it, database, collection, action, record id; a delete its row), which PostgreSQL
 * delivers on commit, in commit order, to every listening node: the other nodes' changes arrive that
 * way (a node skips its own). Between two nodes writing the same record within milliseconds, a node
 * may see its own write before an earlier one of the other node.
 */
export class PgChangeFeed extends LocalChangeFeed {
  private queue: Promise<void> = Promise.resolve();
  private readonly off: () => void;
  private readonly pruner: NodeJS.Timeout;

  constructor(
    notifications: Notifications,
    private readonly registry: DatabaseRegistry,
    private readonly collections: CollectionService,
    private readonly node: string,
  ) {
    super();
    this.off = notifications.listen(CHANNEL, (payload) => {
      // Every node hears every node's writes: one with nobody listening drops them here.
      if (!this.listening) return;
      // One at a time, so listeners see changes in commit order although resolving one may wait.
      this.queue = this.queue.then(() => this.received(payload)).catch(() => undefined);
    });
    this.pruner = setInterval(() => void this.prune(), 60_000);
    this.pruner.unref();
  }

  override async close(): Promise<void> {
    this.off();
    clearInterval(this.pruner);
    await super.close();
  }

  private async received(payload: string): Promise<void> {
    if (!this.listening) return;
    const notice = JSON.parse(payload) as Notice;
    if (notice.n === this.node) return;
    if (!this.registry.has(notice.s)) await this.registry.reload();
    if (!this.registry.has(notice.s)) return;
    const db = await this.registry.get(notice.s);
    const collection = await this.collections.find(db, notice.t);
    if (!collection) return;
    const change: RecordChange = { database: notice.s, collectionId: collection.id, collectionName: collection.name, action: notice.a, recordId: notice.r };
    if (notice.a === 'delete') {
      let row = notice.x;
      if (row === undefined && notice.ref !== undefined) {
        const kept = await this.registry.system.get<{ payload: string }>('SELECT payload FROM _realtime_deletes WHERE id = ?', [notice.ref]);
        row = kept ? (JSON.parse(kept.payload) as Notice).x : undefined;
      }
      if (!row) return;
      change.deleted = serializeRecord(row, shapeOf(collection), PRIVILEGED_VIEWER) as RecordJson;
    }
    this.publish(change);
  }

  private async prune(): Promise<void> {
    await this.registry.system.run('DELETE FROM _realtime_deletes WHERE created < ?', [Date.now() - KEEP_DELETES_MS]).catch(() => undefined);
  }
}
