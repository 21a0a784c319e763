import type { Database, Notifications } from '../storage/index.ts';
import type { ClientDirectory, ForwardedSubscription } from './directory.ts';

const CHANNEL = 'cairn_realtime';
// Each node says every minute that its clients are still there; a row not confirmed for three
// minutes belongs to a node that died, and is ignored and pruned.
const HEARTBEAT_MS = 60_000;
const STALE_MS = 3 * HEARTBEAT_MS;

export const realtimeClientsStep = {
  id: 'realtime.clients',
  async up(tx: Pick<Database, 'exec'>) {
    // `pending`: the last subscription request another node took for the client, until its node reads it.
    await tx.exec("CREATE TABLE _realtime_clients (id TEXT PRIMARY KEY NOT NULL, node TEXT NOT NULL, authId TEXT DEFAULT '' NOT NULL, pending TEXT, seen BIGINT NOT NULL)");
  },
};

/**
 * Record tables' triggers ask, on every write, whether a node other than the writer's lists a client
 * (src/storage/postgres/dialect.ts, `notify_change`): two probes of this index instead of a scan of
 * every client.
 */
export const realtimeClientsNodeStep = {
  id: 'realtime.clients-node',
  async up(tx: Pick<Database, 'exec'>) {
    await tx.exec('CREATE INDEX IF NOT EXISTS _realtime_clients_node ON _realtime_clients (node)');
  },
};

/**
 * The client directory of nodes sharing a PostgreSQL database: `cairn_system._realtime_clients` says
 * which node holds each client and whom it is bound to; a subscription request for another node's
 * client goes to it as a notice (`cairn_realtime`), which that node applies as if it had been sent
 * to it.
 */
export class PgClientDirectory implements ClientDirectory {
  private readonly heartbeat: NodeJS.Timeout;
  private readonly off: () => void;
  private handler?: (request: ForwardedSubscription) => void;

  constructor(
    private readonly system: Database,
    private readonly notifications: Notifications,
    private readonly node: string,
  ) {
    this.off = notifications.listen(CHANNEL, (payload) => {
      const message = JSON.parse(payload) as { to: string; id: string };
      if (message.to === this.node) void this.take(message.id);
    });
    this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private async beat(): Promise<void> {
    try {
      await this.system.run('UPDATE _realtime_clients SET seen = ? WHERE node = ?', [Date.now(), this.node]);
      await this.system.run('DELETE FROM _realtime_clients WHERE seen < ?', [Date.now() - STALE_MS]);
    } catch {
      // The database is unreachable for now: the next beat tries again, well before rows go stale.
    }
  }

  async connected(clientId: string): Promise<void> {
    await this.system.run('INSERT INTO _realtime_clients (id, node, seen) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING', [clientId, this.node, Date.now()]);
  }

  async disconnected(clientId: string): Promise<void> {
    await this.system.run('DELETE FROM _realtime_clients WHERE id = ? AND node = ?', [clientId, this.node]);
  }

  async bound(clientId: string, authId: string): Promise<void> {
    await this.system.run('UPDATE _realtime_clients SET authId = ? WHERE id = ? AND node = ?', [authId, clientId, this.node]);
  }

  async find(clientId: string): Promise<{ node: string; authId: string } | undefined> {
    return this.system.get<{ node: string; authId: string }>('SELECT node, authId FROM _realtime_clients WHERE id = ? AND seen >= ?', [clientId, Date.now() - STALE_MS]);
  }

  /** The request waits in the client's row (a notice holds at most 8000 bytes); the notice names it. */
  async forward(node: string, request: ForwardedSubscription): Promise<void> {
    await this.system.run('UPDATE _realtime_clients SET pending = ? WHERE id = ?', [JSON.stringify(request), request.clientId]);
    await this.notifications.notify(this.system, CHANNEL, JSON.stringify({ to: node, id: request.clientId }));
  }

  private async take(clientId: string): Promise<void> {
    try {
      const row = await this.system.get<{ pending: string | null }>('SELECT pending FROM _realtime_clients WHERE id = ? AND node = ?', [clientId, this.node]);
      if (row?.pending) this.handler?.(JSON.parse(row.pending) as ForwardedSubscription);
    } catch {
      // The database is unreachable: the client's SDK sends its subscriptions again when it reconnects.
    }
  }

  onForwarded(fn: (request: ForwardedSubscription) => void): void {
    this.handler = fn;
  }

  async close(): Promise<void> {
    this.off();
    clearInterval(this.heartbeat);
    await this.system.run('DELETE FROM _realtime_clients WHERE node = ?', [this.node]).catch(() => undefined);
  }
}
