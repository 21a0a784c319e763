import { ApiError, type ErrorData, internal, isApiError } from '../errors.ts';
import { randomId } from '../lib/ids.ts';
import type { Database, Notifications } from '../storage/index.ts';
import type { ClientDirectory, Forwarded } from './directory.ts';

const CHANNEL = 'cairn_realtime';
// Each node says every minute that its clients are still there; a row not confirmed for three
// minutes belongs to a node that died, and is ignored and pruned.
const HEARTBEAT_MS = 60_000;
const STALE_MS = 3 * HEARTBEAT_MS;

export const realtimeClientsStep = {
  id: 'realtime.clients',
  async up(tx: Pick<Database, 'exec'>) {
    // `pending`: a forwarded request, as nodes before `realtime.forwards` hand it on (one per client,
    // so a second overwrote the first); read only from such nodes.
    await tx.exec("CREATE TABLE _realtime_clients (id TEXT PRIMARY KEY NOT NULL, node TEXT NOT NULL, authId TEXT DEFAULT '' NOT NULL, pending TEXT, seen BIGINT NOT NULL)");
  },
};

/** Subscription requests handed to another node, each until that node takes it (see `forward`). */
export const realtimeForwardsStep = {
  id: 'realtime.forwards',
  async up(tx: Pick<Database, 'exec'>) {
    await tx.exec('CREATE TABLE _realtime_forwards (id TEXT PRIMARY KEY NOT NULL, node TEXT NOT NULL, request TEXT NOT NULL, created BIGINT NOT NULL)');
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

/** A notice on `cairn_realtime`: a request handed to `to`, or the answer to one (`answer`). */
type Notice = { to: string; id: string; from?: string; answer?: { status: number; message: string; data?: ErrorData } };

/**
 * The client directory of nodes sharing a PostgreSQL database: `cairn_system._realtime_clients` says
 * which node holds each client and whom it is bound to. A request for another node's client (a
 * subscription, an OAuth2 redirect's code) waits in `_realtime_forwards` and a notice
 * (`cairn_realtime`) tells that node, which applies it as if it had been sent to it and notices back
 * its answer: the caller gets the holder's 204 or refusal, decided where the client's binding is.
 */
export class PgClientDirectory implements ClientDirectory {
  private readonly heartbeat: NodeJS.Timeout;
  private readonly off: () => void;
  private handler?: (request: Forwarded) => Promise<void>;
  /** Requests this node handed on, by id, until their answer comes. */
  private readonly waiting = new Map<string, (answer: Notice['answer']) => void>();

  constructor(
    private readonly system: Database,
    private readonly notifications: Notifications,
    private readonly node: string,
    /** How long to wait for the answer of the node a request was handed to: past the application hooks' limit, which its subscribe may spend. */
    private readonly answerTimeoutMs: number,
  ) {
    this.off = notifications.listen(CHANNEL, (payload) => {
      const notice = JSON.parse(payload) as Notice;
      if (notice.to !== this.node) return;
      if (notice.answer) this.waiting.get(notice.id)?.(notice.answer);
      else if (notice.from) void this.take(notice.id, notice.from);
      // A node of the version before answers (a rolling upgrade) names the client, whose row holds the request.
      else void this.takePending(notice.id);
    });
    this.heartbeat = setInterval(() => void this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private async beat(): Promise<void> {
    try {
      await this.system.run('UPDATE _realtime_clients SET seen = ? WHERE node = ?', [Date.now(), this.node]);
      await this.system.run('DELETE FROM _realtime_clients WHERE seen < ?', [Date.now() - STALE_MS]);
      // Requests neither taken nor withdrawn: their sender and their holder both ended meanwhile.
      await this.system.run('DELETE FROM _realtime_forwards WHERE created < ?', [Date.now() - STALE_MS]);
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

  /** The request waits in its own row (a notice holds at most 8000 bytes); the notice names it. */
  async forward(node: string, request: Forwarded): Promise<void> {
    const id = randomId(20);
    const answered = new Promise<Notice['answer']>((resolve) => {
      const timer = setTimeout(() => resolve(undefined), this.answerTimeoutMs);
      this.waiting.set(id, (answer) => {
        clearTimeout(timer);
        resolve(answer);
      });
    });
    try {
      await this.system.run('INSERT INTO _realtime_forwards (id, node, request, created) VALUES (?, ?, ?, ?)', [id, node, JSON.stringify(request), Date.now()]);
      await this.notifications.notify(this.system, CHANNEL, JSON.stringify({ to: node, id, from: this.node } satisfies Notice));
      const answer = await answered;
      if (!answer) {
        // Not taken in time (its node is gone or stalled): it must not be applied after this answer.
        await this.system.run('DELETE FROM _realtime_forwards WHERE id = ?', [id]).catch(() => undefined);
        throw new ApiError(503, 'The server holding this realtime connection did not answer; try again.', {}, { 'retry-after': '1' });
      }
      if (answer.status >= 300) throw new ApiError(answer.status, answer.message, answer.data);
    } finally {
      this.waiting.delete(id);
    }
  }

  /** Applies a request handed here and notices its answer back; a request already taken or withdrawn is skipped. */
  private async take(id: string, from: string): Promise<void> {
    let answer: Notice['answer'];
    try {
      const row = await this.system.get<{ request: string }>('DELETE FROM _realtime_forwards WHERE id = ? AND node = ? RETURNING request', [id, this.node]);
      if (!row) return;
      try {
        await this.handler?.(JSON.parse(row.request) as Forwarded);
        answer = { status: 204, message: '' };
      } catch (err) {
        const refusal = isApiError(err) ? err : internal();
        answer = { status: refusal.status, message: refusal.message, data: refusal.data };
      }
      await this.notifications.notify(this.system, CHANNEL, JSON.stringify({ to: from, id, answer } satisfies Notice));
    } catch {
      // The database is unreachable: the caller's wait ends in its 503, and the client's SDK sends its
      // subscriptions again when it reconnects.
    }
  }

  private async takePending(clientId: string): Promise<void> {
    try {
      const row = await this.system.get<{ pending: string | null }>('SELECT pending FROM _realtime_clients WHERE id = ? AND node = ?', [clientId, this.node]);
      if (row?.pending) await this.handler?.(JSON.parse(row.pending) as Forwarded);
    } catch {
      // Its sender answered already; the client's SDK subscribes again when it reconnects.
    }
  }

  onForwarded(fn: (request: Forwarded) => Promise<void>): void {
    this.handler = fn;
  }

  async close(): Promise<void> {
    this.off();
    clearInterval(this.heartbeat);
    await this.system.run('DELETE FROM _realtime_clients WHERE node = ?', [this.node]).catch(() => undefined);
  }
}
