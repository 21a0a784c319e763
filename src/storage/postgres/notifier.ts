import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Notifications } from '../backend.ts';
import type { Queryable } from '../types.ts';
import { KEEP_ALIVE } from './statements.ts';

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5000;
// How long close() waits for a connection attempt under way (see close).
const CLOSE_CONNECTING_WAIT_MS = 1000;
// The listening connection's application_name starts with this and names its node, so a node can
// ask PostgreSQL which others are listening (`peers`). Nodes before this named it `cairn-listen`.
const LISTENER_PREFIX = 'cairn-listen:';

/** A node's listener name: its id where it fits PostgreSQL's 63 bytes, else a digest of it. */
export function listenerTag(node: string): string {
  const id = node.length <= 50 ? node : `#${createHash('sha256').update(node).digest('hex').slice(0, 32)}`;
  return LISTENER_PREFIX + id;
}

/**
 * PostgreSQL's LISTEN/NOTIFY as Cairn's cross-node notices. One dedicated connection (outside the
 * pool, since a pooled connection would be handed to other work) listens on every channel asked
 * for. A NOTIFY sent inside a transaction is delivered when, and only if, it commits, to every
 * listening process including the sender. When the connection drops, notices sent meanwhile are
 * lost: it reconnects with backoff and then tells `onResync` listeners, who re-read what they cache.
 */
export class PgNotifier implements Notifications {
  private client?: pg.Client;
  private readonly handlers = new Map<string, Set<(payload: string) => void>>();
  private readonly resyncs = new Set<() => void>();
  private connecting?: Promise<void>;
  private retryMs = RECONNECT_MIN_MS;
  private timer?: NodeJS.Timeout;
  private closed = false;

  readonly tag: string;

  constructor(
    private readonly url: string,
    node: string,
  ) {
    this.tag = listenerTag(node);
  }

  listen(channel: string, fn: (payload: string) => void): () => void {
    let set = this.handlers.get(channel);
    if (!set) {
      this.handlers.set(channel, (set = new Set()));
      if (this.client) void this.client.query(`LISTEN ${channel}`).catch(() => this.reconnectSoon());
    }
    set.add(fn);
    this.ensure();
    return () => set!.delete(fn);
  }

  onResync(fn: () => void): () => void {
    this.resyncs.add(fn);
    return () => this.resyncs.delete(fn);
  }

  async notify(tx: Queryable, channel: string, payload: string): Promise<void> {
    await tx.get('SELECT pg_notify(?, ?) AS sent', [channel, payload]);
  }

  async peers(q: Queryable): Promise<string[]> {
    const rows = await q.all<{ name: string }>(
      "SELECT application_name AS name FROM pg_stat_activity WHERE datname = current_database() AND starts_with(application_name, ?)",
      [LISTENER_PREFIX],
    );
    return rows.map((r) => r.name);
  }

  /** Resolves once the listening connection is up (tests and start-up use it to know notices flow). */
  ready(): Promise<void> {
    this.ensure();
    return this.connecting ?? Promise.resolve();
  }

  private ensure(): void {
    if (this.client || this.connecting || this.closed || this.timer) return;
    this.connecting = this.connect().finally(() => (this.connecting = undefined));
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.url, application_name: this.tag, ...KEEP_ALIVE });
    client.on('error', () => this.reconnectSoon());
    client.on('end', () => this.reconnectSoon());
    client.on('notification', (msg) => {
      for (const fn of this.handlers.get(msg.channel) ?? []) {
        try {
          fn(msg.payload ?? '');
        } catch {
          // A failing listener must not stop the others.
        }
      }
    });
    try {
      await client.connect();
      for (const channel of this.handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
      this.schedule();
      return;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    const wasLost = this.retryMs > RECONNECT_MIN_MS;
    this.client = client;
    this.retryMs = RECONNECT_MIN_MS;
    if (wasLost) for (const fn of this.resyncs) fn();
  }

  private reconnectSoon(): void {
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      void client.end().catch(() => {});
    }
    this.schedule();
  }

  private schedule(): void {
    if (this.closed || this.timer) return;
    // Marks the connection as lost, so the next successful connect tells resync listeners.
    const delay = this.retryMs;
    this.retryMs = Math.min(RECONNECT_MAX_MS, this.retryMs * 2);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ensure();
    }, delay);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    // A connection under way ends itself once it is up (connect() sees `closed`). It is waited for
    // only briefly: connecting has no timeout of its own, and a server out of reach (packets dropped)
    // would hold the shutdown for the operating system's connect timeout, minutes.
    if (this.connecting) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.connecting, new Promise<void>((resolve) => (timer = setTimeout(resolve, CLOSE_CONNECTING_WAIT_MS)))]);
      clearTimeout(timer);
    }
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners('end');
      await client.end().catch(() => {});
    }
  }
}
