import type { Queryable, SchemaStep } from '../storage/index.ts';
import { nowIso } from '../lib/time.ts';
import type { InstanceSchema, MigrationStatus } from './model.ts';

/**
 * `_migrations` in system.db: what happened to each migration. An applied one keeps its file's
 * SHA-256 (to notice later edits), `rollback_data` (the schema of the databases it touched, taken
 * just before it ran, and the databases it created) and `schema_after` (every database's schema
 * right after it ran: what the next `generate` diffs against). `seq` orders applications.
 */

export const journalTableStep: SchemaStep = {
  id: 'migrations.journal',
  async up(tx) {
    await tx.exec(`CREATE TABLE _migrations (
      version TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL,
      checksum TEXT DEFAULT NULL,
      status TEXT NOT NULL,
      error TEXT DEFAULT NULL,
      rollback_data JSON DEFAULT NULL,
      schema_after JSON DEFAULT NULL,
      seq INTEGER DEFAULT NULL,
      applied_at TEXT DEFAULT NULL,
      updated TEXT NOT NULL
    )`);
    // One row at most: whoever holds it is applying or rolling back (any process on this data dir).
    await tx.exec(`CREATE TABLE _migrations_lock (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      owner TEXT NOT NULL,
      pid INTEGER NOT NULL,
      host TEXT NOT NULL,
      acquired TEXT NOT NULL
    )`);
  },
};

export interface RollbackData {
  databases: InstanceSchema;
  /** Databases the migration created (they existed from then on; rollback keeps them). */
  created: string[];
}

export interface JournalEntry {
  version: string;
  name: string;
  checksum: string | null;
  status: MigrationStatus;
  error: string | null;
  seq: number | null;
  applied_at: string | null;
}

const ENTRY_COLUMNS = 'version, name, checksum, status, error, seq, applied_at';

export async function journalEntries(db: Queryable): Promise<JournalEntry[]> {
  return db.all<JournalEntry>(`SELECT ${ENTRY_COLUMNS} FROM _migrations ORDER BY version`);
}

export async function journalEntry(db: Queryable, version: string): Promise<JournalEntry | undefined> {
  return db.get<JournalEntry>(`SELECT ${ENTRY_COLUMNS} FROM _migrations WHERE version = ?`, [version]);
}

/** The most recently applied migration. */
export async function latestApplied(db: Queryable): Promise<JournalEntry | undefined> {
  return db.get<JournalEntry>(`SELECT ${ENTRY_COLUMNS} FROM _migrations WHERE status = 'applied' ORDER BY seq DESC LIMIT 1`);
}

/** Versions applied after the one with `seq`, latest first. */
export async function appliedAfter(db: Queryable, seq: number): Promise<string[]> {
  const rows = await db.all<{ version: string }>(`SELECT version FROM _migrations WHERE status = 'applied' AND seq > ? ORDER BY seq DESC`, [seq]);
  return rows.map((r) => r.version);
}

/** The schema recorded after the latest applied migration; empty before the first. */
export async function recordedSchema(db: Queryable): Promise<InstanceSchema> {
  const row = await db.get<{ schema_after: string | null }>(
    `SELECT schema_after FROM _migrations WHERE status = 'applied' ORDER BY seq DESC LIMIT 1`,
  );
  return row?.schema_after ? JSON.parse(row.schema_after) : {};
}

export async function rollbackData(db: Queryable, version: string): Promise<RollbackData | undefined> {
  const row = await db.get<{ rollback_data: string | null }>('SELECT rollback_data FROM _migrations WHERE version = ?', [version]);
  return row?.rollback_data ? JSON.parse(row.rollback_data) : undefined;
}

async function upsert(db: Queryable, version: string, name: string, values: Record<string, unknown>): Promise<void> {
  const columns = ['checksum', 'status', 'error', 'rollback_data', 'schema_after', 'seq', 'applied_at'];
  const params = columns.map((c) => values[c] ?? null);
  await db.run(
    `INSERT INTO _migrations (version, name, ${columns.join(', ')}, updated) VALUES (?, ?, ${columns.map(() => '?').join(', ')}, ?)
     ON CONFLICT (version) DO UPDATE SET name = excluded.name, ${columns.map((c) => `${c} = excluded.${c}`).join(', ')}, updated = excluded.updated`,
    [version, name, ...params, nowIso()],
  );
}

export async function markApplied(
  db: Queryable,
  entry: { version: string; name: string; checksum: string; rollback: RollbackData; schemaAfter: InstanceSchema },
): Promise<void> {
  const next = await db.get<{ seq: number | null }>('SELECT MAX(seq) AS seq FROM _migrations');
  await upsert(db, entry.version, entry.name, {
    checksum: entry.checksum,
    status: 'applied',
    rollback_data: JSON.stringify(entry.rollback),
    schema_after: JSON.stringify(entry.schemaAfter),
    seq: (next?.seq ?? 0) + 1,
    applied_at: nowIso(),
  });
}

export async function markFailed(db: Queryable, version: string, name: string, error: string): Promise<void> {
  await upsert(db, version, name, { status: 'failed', error });
}

/** After a rollback: the migration waits to be applied again; its snapshot is spent. */
export async function markPending(db: Queryable, version: string, name: string): Promise<void> {
  await upsert(db, version, name, { status: 'pending' });
}

export async function removeEntry(db: Queryable, version: string): Promise<void> {
  await db.run('DELETE FROM _migrations WHERE version = ?', [version]);
}
