import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { StorageBackend } from '../backend.ts';
import { applySchemaSteps, type SchemaStep } from '../schema-steps.ts';
import type { Database, Queryable } from '../types.ts';
import { sqliteDialect } from './dialect.ts';
import { peekSqlite, SqliteDatabase } from './driver.ts';
import { FolderNotices } from './folder-notices.ts';
import { SqliteSuperusers } from './superusers.ts';

/** Databases as files: `<dir>/system.db` and `<dir>/databases/<name>.db`. */
export class SqliteBackend implements StorageBackend {
  readonly dialect = sqliteDialect;
  readonly shared = false;

  /** What data databases' views read as `_superusers`. */
  private readonly superusers: SqliteSuperusers;
  /** A server and the commands run beside it tell each other of changes to what they cache. */
  readonly processNotices: FolderNotices;

  constructor(private readonly dir: string) {
    this.superusers = new SqliteSuperusers(path.join(dir, 'system.db'));
    this.processNotices = new FolderNotices(path.join(dir, '.notify'));
  }

  get location(): string {
    return this.dir;
  }

  async openSystem(): Promise<Database> {
    mkdirSync(path.join(this.dir, 'databases'), { recursive: true });
    return new SqliteDatabase('system', path.join(this.dir, 'system.db'));
  }

  async openLogs(): Promise<Database> {
    return new SqliteDatabase('logs', path.join(this.dir, 'logs.db'));
  }

  async open(name: string): Promise<Database | undefined> {
    const file = this.fileOf(name);
    return existsSync(file) ? new SqliteDatabase(name, file, this.superusers.rows) : undefined;
  }

  async peek<T>(name: string, fn: (q: Queryable) => Promise<T>): Promise<T | undefined> {
    const file = this.fileOf(name);
    return existsSync(file) ? peekSqlite(file, fn) : undefined;
  }

  async create(name: string): Promise<Database> {
    return new SqliteDatabase(name, this.fileOf(name), this.superusers.rows);
  }

  async remove(name: string, db: Database | undefined): Promise<void> {
    await db?.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(this.fileOf(name) + suffix, { force: true });
  }

  applySteps(db: Database, steps: readonly SchemaStep[]): Promise<void> {
    return applySchemaSteps(db, steps);
  }

  async close(): Promise<void> {
    this.superusers.close();
    this.processNotices.close();
  }

  private fileOf(name: string): string {
    // The name passed isValidDatabaseName, so it cannot leave the directory.
    return path.join(this.dir, 'databases', `${name}.db`);
  }
}
