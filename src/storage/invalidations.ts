import type { Notifications } from './backend.ts';
import type { Queryable } from './types.ts';

/** What a node caches that another node can change: the key names the database where there is one. */
export type CacheTopic = 'collections' | 'settings' | 'cron' | 'databases';

const CHANNEL = 'cairn_cache';
// A notice normally comes back in a few milliseconds; past this the change is answered anyway (the
// other nodes get it when it arrives, and re-read everything if their connection had dropped).
const ECHO_TIMEOUT_MS = 1000;

interface Notice {
  /** Topic, key, sending node, and a sequence number of that node. */
  t: CacheTopic;
  k?: string;
  n: string;
  s: number;
}

/**
 * Cache invalidation across the nodes of an instance. A change drops the caches of this process at
 * once and sends a notice (PostgreSQL's NOTIFY) that every other node's listener turns into the same
 * drop; `publish` resolves once its own notice has come back from the database, which PostgreSQL
 * sends to every listener together, so by the time the change is answered the others have it. When a
 * node's listening connection was lost (notices may have been missed), its listeners are called with
 * no key: drop everything. With one process (SQLite) it is a local call.
 */
export class Invalidations {
  private readonly listeners = new Map<CacheTopic, Set<(key: string | undefined) => void>>();
  private readonly echoes = new Map<number, () => void>();
  private seq = 0;

  constructor(
    private readonly node: string,
    private readonly notifications?: Notifications,
    private readonly sender?: Queryable,
  ) {
    notifications?.listen(CHANNEL, (payload) => this.received(payload));
    notifications?.onResync(() => {
      for (const topic of this.listeners.keys()) this.call(topic, undefined);
    });
  }

  on(topic: CacheTopic, fn: (key: string | undefined) => void): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(fn);
    return () => set!.delete(fn);
  }

  /** Drops `topic` (of database `key`) here and on every node; resolves once the others have been told. */
  async publish(topic: CacheTopic, key?: string): Promise<void> {
    this.call(topic, key);
    if (!this.notifications || !this.sender) return;
    const notice: Notice = { t: topic, k: key, n: this.node, s: ++this.seq };
    const echoed = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.echoes.delete(notice.s);
        resolve();
      }, ECHO_TIMEOUT_MS);
      timer.unref();
      this.echoes.set(notice.s, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    try {
      await this.notifications.notify(this.sender, CHANNEL, JSON.stringify(notice));
    } catch {
      // The database is unreachable: the other nodes re-read everything when their listener is back.
      this.echoes.delete(notice.s);
      return;
    }
    await echoed;
  }

  private received(payload: string): void {
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if (notice.n === this.node) {
      this.echoes.get(notice.s)?.();
      this.echoes.delete(notice.s);
      return;
    }
    this.call(notice.t, notice.k);
  }

  private call(topic: CacheTopic, key: string | undefined): void {
    for (const fn of this.listeners.get(topic) ?? []) {
      try {
        fn(key);
      } catch {
        // One cache failing to drop must not keep the others.
      }
    }
  }
}
