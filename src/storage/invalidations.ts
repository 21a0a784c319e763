import type { Notifications, ProcessNotices } from './backend.ts';
import type { Queryable } from './types.ts';

/** What a node caches that another node can change: the key names the database where there is one. */
export type CacheTopic = 'collections' | 'settings' | 'cron' | 'databases';

const CHANNEL = 'cairn_cache';
// Each node that has dropped what a notice names says so here.
const ACK_CHANNEL = 'cairn_cache_ack';
// A notice normally comes back in a few milliseconds; past this the change is answered anyway (a
// node that has not answered by then drops its cache when the notice reaches it, and a node whose
// connection had dropped re-reads everything).
const ECHO_TIMEOUT_MS = 1000;

interface Notice {
  /** Topic, key, sending node, and a sequence number of that node. */
  t: CacheTopic;
  k?: string;
  n: string;
  s: number;
}

/** A node's answer to a notice: the notice's node and number, and the answering node's listener name. */
interface Ack {
  n: string;
  s: number;
  g: string;
}

/**
 * Cache invalidation across the nodes of an instance. A change drops the caches of this process at
 * once and sends a notice (PostgreSQL's NOTIFY) that every other node's listener turns into the same
 * drop, then answers with an acknowledgement. `publish` resolves once its own notice has come back
 * and every node that was listening when it was sent has acknowledged it, so a request that follows
 * the change's answer finds the change on whichever node serves it (PostgreSQL hands a notice to
 * each listener's backend at the commit, but a node reads it when its event loop comes to it:
 * without the wait, another node could serve a request sent after the answer before reading the
 * notice). A node that does not answer within a second is not waited for longer: it drops its cache
 * when it reads the notice. When a node's listening connection was lost (notices may have been
 * missed), its listeners are called with no key: drop everything. With one process (SQLite) it is a
 * local call.
 */
export class Invalidations {
  private readonly listeners = new Map<CacheTopic, Set<(key: string | undefined) => unknown>>();
  /** Notices of this node under way, by number: the listeners whose answer is still awaited. */
  private readonly waiting = new Map<number, { echoed: boolean; peers: Set<string>; done(): void }>();
  private seq = 0;

  constructor(
    private readonly node: string,
    private readonly notifications?: Notifications,
    private readonly sender?: Queryable,
    /** SQLite: a server and the commands run beside it (`cairn superuser ips`, `migrate`) tell each other. */
    private readonly processes?: ProcessNotices,
  ) {
    processes?.listen((topic, key) => void this.call(topic as CacheTopic, key));
    notifications?.listen(CHANNEL, (payload) => void this.received(payload));
    notifications?.listen(ACK_CHANNEL, (payload) => this.acknowledged(payload));
    notifications?.onResync(() => {
      for (const topic of this.listeners.keys()) void this.call(topic, undefined);
    });
  }

  /** Calls `fn` when `topic` changes; a promise it returns is waited for before the change is acknowledged. */
  on(topic: CacheTopic, fn: (key: string | undefined) => unknown): () => void {
    let set = this.listeners.get(topic);
    if (!set) this.listeners.set(topic, (set = new Set()));
    set.add(fn);
    return () => set!.delete(fn);
  }

  /** Drops `topic` (of database `key`) here and on every node; resolves once the others have dropped it. */
  async publish(topic: CacheTopic, key?: string): Promise<void> {
    void this.call(topic, key);
    this.processes?.announce(topic, key);
    const { notifications, sender } = this;
    if (!notifications || !sender) return;
    const notice: Notice = { t: topic, k: key, n: this.node, s: ++this.seq };
    let peers: string[];
    try {
      // Asked before the notice goes: a node listening by then receives it (a later one reads the
      // collections afresh anyway).
      peers = await notifications.peers(sender);
    } catch {
      peers = [];
    }
    const answered = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiting.delete(notice.s);
        resolve();
      };
      const timer = setTimeout(done, ECHO_TIMEOUT_MS);
      timer.unref();
      this.waiting.set(notice.s, { echoed: false, peers: new Set(peers.filter((p) => p !== notifications.tag)), done });
    });
    try {
      await notifications.notify(sender, CHANNEL, JSON.stringify(notice));
    } catch {
      // The database is unreachable: the other nodes re-read everything when their listener is back.
      this.waiting.get(notice.s)?.done();
      return;
    }
    await answered;
  }

  private async received(payload: string): Promise<void> {
    let notice: Notice;
    try {
      notice = JSON.parse(payload) as Notice;
    } catch {
      return;
    }
    if (notice.n === this.node) {
      const wait = this.waiting.get(notice.s);
      if (wait) {
        wait.echoed = true;
        if (wait.peers.size === 0) wait.done();
      }
      return;
    }
    await this.call(notice.t, notice.k);
    if (!this.notifications || !this.sender) return;
    const ack: Ack = { n: notice.n, s: notice.s, g: this.notifications.tag };
    // Unanswered, the sending node waits out its limit and answers anyway.
    await this.notifications.notify(this.sender, ACK_CHANNEL, JSON.stringify(ack)).catch(() => undefined);
  }

  private acknowledged(payload: string): void {
    let ack: Ack;
    try {
      ack = JSON.parse(payload) as Ack;
    } catch {
      return;
    }
    if (ack.n !== this.node) return;
    const wait = this.waiting.get(ack.s);
    if (!wait) return;
    wait.peers.delete(ack.g);
    if (wait.echoed && wait.peers.size === 0) wait.done();
  }

  /** Calls the topic's listeners; resolves once what they started has settled. */
  private async call(topic: CacheTopic, key: string | undefined): Promise<void> {
    const started: unknown[] = [];
    for (const fn of this.listeners.get(topic) ?? []) {
      try {
        started.push(fn(key));
      } catch {
        // One cache failing to drop must not keep the others.
      }
    }
    await Promise.allSettled(started);
  }
}
