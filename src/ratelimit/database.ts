import type { Database, SchemaStep } from '../storage/index.ts';
import type { RateCounters } from './counters.ts';

/**
 * `_rate_limits` in the instance's own database: one row per key, its hits and when its window ends.
 * Counters are worth nothing after a crash, so on PostgreSQL the table is UNLOGGED: a hit's commit
 * writes no WAL and waits on no disk flush.
 */
export const rateLimitsTableStep: SchemaStep = {
  id: 'ratelimit.counters',
  async up(tx) {
    await tx.exec(`${tx.dialect.createUnloggedTable} _rate_limits (bucket TEXT PRIMARY KEY NOT NULL, hits INTEGER NOT NULL, reset_at TEXT NOT NULL)`);
  },
};

// One statement per hit, atomic under concurrent nodes: the row's lock orders them. A window that
// has ended starts again at 1; timestamps are ISO 8601 text, compared as strings.
const HIT = `INSERT INTO _rate_limits (bucket, hits, reset_at) VALUES (?, 1, ?)
  ON CONFLICT (bucket) DO UPDATE SET
    hits = CASE WHEN _rate_limits.reset_at <= ? THEN 1 ELSE _rate_limits.hits + 1 END,
    reset_at = CASE WHEN _rate_limits.reset_at <= ? THEN excluded.reset_at ELSE _rate_limits.reset_at END
  RETURNING hits, reset_at`;

const PRUNE_EVERY_MS = 60_000;

/**
 * Counters in a table of the database every node shares (PostgreSQL's `cairn_system`). The window
 * is measured with each node's clock, which NTP keeps within milliseconds of the others': nothing
 * next to a window of a minute. Rows of ended windows are deleted once a minute by every node (a
 * delete of rows already gone costs nothing).
 */
export class DatabaseCounters implements RateCounters {
  private readonly pruner: NodeJS.Timeout;

  constructor(
    private readonly db: Database,
    onPruneError: (err: unknown) => void = () => {},
  ) {
    this.pruner = setInterval(() => void this.prune().catch(onPruneError), PRUNE_EVERY_MS);
    this.pruner.unref();
  }

  async hit(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }> {
    const now = Date.now();
    const nowIso = new Date(now).toISOString();
    const row = await this.db.get<{ hits: number | string; reset_at: string }>(HIT, [key, new Date(now + windowMs).toISOString(), nowIso, nowIso]);
    return { count: Number(row!.hits), ttlMs: Math.max(0, Date.parse(row!.reset_at) - now) };
  }

  /** Deletes the rows of windows that have ended. */
  async prune(): Promise<number> {
    return (await this.db.run('DELETE FROM _rate_limits WHERE reset_at <= ?', [new Date().toISOString()])).changes;
  }

  async close(): Promise<void> {
    clearInterval(this.pruner);
  }
}
