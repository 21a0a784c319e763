import type { Queryable } from '../storage/index.ts';

/**
 * PocketBase's migration history: the `_migrations` table of each database, one row per applied file,
 * `applied` in microseconds since the epoch, as PocketBase's runner writes it (core/migrations_runner.go;
 * v0.22's tools/migrate/runner.go: the same table). Not to be confused with system.db's `_migrations`,
 * the registry of Cairn's YAML migrations (src/migrations/journal.ts): another database (on PostgreSQL,
 * another schema) holds that one.
 */

export const HISTORY_TABLE = '_migrations';

/**
 * PocketBase's own statement, with BIGINT for its INTEGER: the same 64-bit integer on SQLite, and a
 * column PostgreSQL's 32-bit INTEGER could not hold microseconds in.
 */
const CREATE = `CREATE TABLE IF NOT EXISTS ${HISTORY_TABLE} (file VARCHAR(255) PRIMARY KEY NOT NULL, applied BIGINT NOT NULL)`;

export async function ensureHistory(q: Queryable): Promise<void> {
  await q.exec(CREATE);
}

export interface HistoryRow {
  file: string;
  applied: number;
}

/** Every row, or none when the table is not there yet. */
export async function historyOf(q: Queryable): Promise<HistoryRow[]> {
  if (!(await q.dialect.tableExists(q, HISTORY_TABLE))) return [];
  const rows = await q.all<{ file: string; applied: unknown }>(`SELECT file, applied FROM ${HISTORY_TABLE}`);
  return rows.map((r) => ({ file: r.file, applied: Number(r.applied) }));
}

export async function isApplied(q: Queryable, file: string): Promise<boolean> {
  return (await q.get(`SELECT 1 AS one FROM ${HISTORY_TABLE} WHERE file = ?`, [file])) !== undefined;
}

export async function recordApplied(q: Queryable, file: string, applied: number): Promise<void> {
  await q.run(`INSERT INTO ${HISTORY_TABLE} (file, applied) VALUES (?, ?)`, [file, applied]);
}

export async function recordReverted(q: Queryable, file: string): Promise<void> {
  await q.run(`DELETE FROM ${HISTORY_TABLE} WHERE file = ?`, [file]);
}

/** Drops the rows of files not in `keep` (all of them when it is empty); answers the files dropped. */
export async function dropMissing(q: Queryable, keep: ReadonlySet<string>): Promise<string[]> {
  const gone = (await historyOf(q)).map((r) => r.file).filter((f) => !keep.has(f));
  for (const file of gone) await recordReverted(q, file);
  return gone;
}

/**
 * The order of "last applied" (PocketBase's `lastAppliedMigrations`): by `applied`, newest first, with
 * values written in seconds by old PocketBase versions padded to microseconds; then by file name,
 * last first.
 */
export function newestFirst(a: HistoryRow, b: HistoryRow): number {
  const key = (r: HistoryRow) => String(r.applied).padEnd(16, '0').slice(0, 16);
  const ka = key(a);
  const kb = key(b);
  if (ka !== kb) return ka < kb ? 1 : -1;
  return a.file < b.file ? 1 : a.file > b.file ? -1 : 0;
}

/** Adds rows (another instance's history, `cairn import pocketbase`) that are not there yet; answers how many. */
export async function carryHistory(q: Queryable, rows: readonly HistoryRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  await ensureHistory(q);
  let added = 0;
  for (const row of rows) {
    if (await isApplied(q, row.file)) continue;
    await recordApplied(q, row.file, row.applied);
    added++;
  }
  return added;
}
