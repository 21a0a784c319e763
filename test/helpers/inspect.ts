import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { SECRET_FILE } from '../../src/auth/secret.ts';
import { PostgresBackend } from '../../src/storage/postgres/backend.ts';
import { SqliteBackend } from '../../src/storage/sqlite/backend.ts';
import type { StorageBackend } from '../../src/storage/backend.ts';
import type { Database, Queryable, Row } from '../../src/storage/types.ts';
import { databaseUrlFor, onPostgres } from './postgres.ts';
import type { TestServer } from './server.ts';

/**
 * Looking at storage past Cairn's API, on whichever driver the test pass runs: through the server's
 * own handles (`databaseOf`), or, for a server in another process, through a storage backend opened
 * on the same data directory (`openStorage`). What the dialect cannot answer (the indexes of a table,
 * the list of tables, every row) is asked of each database's catalogue here.
 */

/** A database of a test server (`system` for the instance's own tables). */
export function databaseOf(server: TestServer, name = 'main'): Promise<Database> {
  return name === 'system' ? Promise.resolve(server.services.registry.system) : server.services.registry.get(name);
}

/** Names of a table's physical columns in order, without the driver's hidden ones (`_seq`, `_fts`). */
export async function columnsOf(db: Queryable, table: string): Promise<string[]> {
  return (await db.dialect.tableColumns(db, table)).map((c) => c.name);
}

/** Whether a table or a view of that name exists. */
export function relationExists(db: Queryable, name: string): Promise<boolean> {
  return db.dialect.tableExists(db, name);
}

/** Whether an index of that name exists (on any table). */
export async function indexExists(db: Queryable, name: string): Promise<boolean> {
  return (await db.dialect.indexTable(db, name)) !== undefined;
}

/** Names of the indexes of a table, sorted; without the ones a database makes for its primary key
 * and unique constraints by itself (SQLite's `sqlite_autoindex_*`, PostgreSQL's `*_pkey`). */
export async function indexesOf(db: Queryable, table: string): Promise<string[]> {
  const rows =
    db.dialect.name === 'sqlite'
      ? await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL", [table])
      : await db.all<{ name: string }>(
          `SELECT i.indexname AS name FROM pg_indexes i
            WHERE i.schemaname = current_schema() AND i.tablename = ?
              AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname AND c.connamespace = current_schema()::regnamespace)`,
          [table],
        );
  return rows.map((r) => r.name).sort();
}

/** The SQL that defines an index (`CREATE [UNIQUE] INDEX …`, as the database keeps it), or undefined. */
export async function indexSqlOf(db: Queryable, name: string): Promise<string | undefined> {
  const row =
    db.dialect.name === 'sqlite'
      ? await db.get<{ sql: string }>("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = ?", [name])
      : await db.get<{ sql: string }>('SELECT indexdef AS sql FROM pg_indexes WHERE schemaname = current_schema() AND indexname = ?', [name]);
  return row?.sql;
}

/** Names of the database's tables (not views), sorted; without SQLite's own `sqlite_*` tables. */
export async function tablesOf(db: Queryable): Promise<string[]> {
  const rows =
    db.dialect.name === 'sqlite'
      ? await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
      : await db.all<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema()");
  return rows.map((r) => r.name).sort();
}

/** Every row of every table of a database, by table (for looking for values stored anywhere). */
export async function dumpRows(db: Queryable): Promise<Record<string, Row[]>> {
  const out: Record<string, Row[]> = {};
  for (const table of await tablesOf(db)) out[table] = await db.all(`SELECT * FROM ${db.dialect.quoteIdent(table)}`);
  return out;
}

/** The storage of a data directory that a server in another process (or a CLI run) uses. */
export interface Storage {
  system: Database;
  /** A database by name; throws when it has no storage. */
  database(name: string): Promise<Database>;
  /** The request log's database (`logs.db`, or the instance schema on PostgreSQL). */
  logs(): Promise<Database>;
  close(): Promise<void>;
}

/** Opens the storage of `dir` as this test pass's driver keeps it (its SQLite files, or its
 * PostgreSQL database). Close it before the directory or the database goes. */
export async function openStorage(dir: string): Promise<Storage> {
  const backend: StorageBackend = onPostgres
    ? new PostgresBackend({ url: await databaseUrlFor(dir), poolSize: 2, statementTimeoutMs: 30_000, connectTimeoutMs: 10_000 })
    : new SqliteBackend(dir);
  const system = await backend.openSystem();
  const opened: Database[] = [system];
  return {
    system,
    async database(name) {
      const db = await backend.open(name);
      if (!db) throw new Error(`no storage for database "${name}" in ${dir}`);
      opened.push(db);
      return db;
    },
    async logs() {
      const db = await backend.openLogs();
      opened.push(db);
      return db;
    },
    async close() {
      for (const db of opened) await db.close();
      await backend.close();
    },
  };
}

/** Runs `fn` on one database of `dir`'s storage, opened for it and closed after. */
export async function withDatabase<T>(dir: string, name: string, fn: (db: Database) => Promise<T>): Promise<T> {
  const storage = await openStorage(dir);
  try {
    return await fn(name === 'system' ? storage.system : await storage.database(name));
  } finally {
    await storage.close();
  }
}

/** The generated instance secret as kept in storage: `<dir>/.jwt_secret` on SQLite, the `_secrets`
 * table of the instance schema on PostgreSQL (where every node must read the same one). */
export async function storedInstanceSecret(dir: string, system: Queryable): Promise<string | undefined> {
  if (system.dialect.name === 'postgres') return (await system.get<{ value: string }>("SELECT value FROM _secrets WHERE name = 'instance'"))?.value;
  const file = path.join(dir, SECRET_FILE);
  return existsSync(file) ? readFileSync(file, 'utf8').trim() : undefined;
}

/**
 * The databases that have storage, sorted, whether or not Cairn lists them: the files under
 * `<dir>/databases/` on SQLite, the schemas of the PostgreSQL database on PostgreSQL (without the
 * instance's own, `cairn_system`, and the server's).
 */
export async function storedDatabases(server: TestServer): Promise<string[]> {
  const system = server.services.registry.system;
  if (system.dialect.name === 'sqlite') {
    const dir = path.join(server.dir, 'databases');
    return existsSync(dir) ? readdirSync(dir).flatMap((f) => (f.endsWith('.db') ? [f.slice(0, -3)] : [])).sort() : [];
  }
  const rows = await system.all<{ name: string }>(
    "SELECT nspname AS name FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname NOT IN ('information_schema', 'public', 'cairn_system')",
  );
  return rows.map((r) => r.name).sort();
}

/** Whether the instance's own storage is there: `<dir>/system.db`, or the `cairn_system` schema. */
export async function systemStorageExists(server: TestServer): Promise<boolean> {
  const system = server.services.registry.system;
  if (system.dialect.name === 'sqlite') return existsSync(path.join(server.dir, 'system.db'));
  return (await system.get("SELECT 1 AS found FROM pg_namespace WHERE nspname = 'cairn_system'")) !== undefined;
}
