import { existsSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { badRequest, conflict, notFound } from '../errors.ts';
import { isValidDatabaseName } from '../lib/identifiers.ts';
import { nowIso } from '../lib/time.ts';
import { applySchemaSteps, type SchemaStep } from './schema-steps.ts';
import { SqliteDatabase } from './sqlite/driver.ts';
import type { Database } from './types.ts';

export interface DatabaseInfo {
  name: string;
  created: string;
}

export interface RegistryOptions {
  /** The data directory. */
  dir: string;
  /** Internal schema of system.db. */
  systemSteps: readonly SchemaStep[];
  /** Internal schema of every database; runs when a database is created and each time it opens. */
  databaseSteps: readonly SchemaStep[];
  /** Schema of the request log's database (`logs`). */
  logSteps?: readonly SchemaStep[];
}

export const DEFAULT_DATABASE = 'main';

/**
 * The only place a database name becomes a file. Databases are listed in system.db; a name that is
 * not listed there is unknown (404), and nothing but `create` makes a new one.
 */
export class DatabaseRegistry {
  private systemDb?: Database;
  private logsDb?: Database;
  private readonly known = new Map<string, DatabaseInfo>();
  private readonly open = new Map<string, Promise<Database>>();
  /** The databases of `open` whose opening has finished, for the synchronous lookup of `opened`. */
  private readonly ready = new Map<string, Database>();
  private closing = false;

  constructor(private readonly options: RegistryOptions) {}

  get dir(): string {
    return this.options.dir;
  }

  /** Opens system.db and logs.db, loads the database list and makes sure `main` exists. */
  async start(): Promise<void> {
    mkdirSync(path.join(this.options.dir, 'databases'), { recursive: true });
    this.systemDb = new SqliteDatabase('system', path.join(this.options.dir, 'system.db'));
    await applySchemaSteps(this.systemDb, this.options.systemSteps);
    // The request log has a file of its own: its writes never wait for, nor hold up, a data database's.
    this.logsDb = new SqliteDatabase('logs', path.join(this.options.dir, 'logs.db'));
    await applySchemaSteps(this.logsDb, this.options.logSteps ?? []);
    for (const row of await this.systemDb.all<DatabaseInfo>('SELECT name, created FROM _databases ORDER BY name')) {
      this.known.set(row.name, row);
    }
    if (!this.known.has(DEFAULT_DATABASE)) await this.create(DEFAULT_DATABASE);
  }

  get system(): Database {
    if (!this.systemDb) throw new Error('registry not started');
    return this.systemDb;
  }

  /** The request log's database (not a data database: no collections, never named by x-dbname). */
  get logs(): Database {
    if (!this.logsDb) throw new Error('registry not started');
    return this.logsDb;
  }

  has(name: string): boolean {
    return this.known.has(name);
  }

  list(): DatabaseInfo[] {
    return [...this.known.values()].sort((a, b) => a.name.localeCompare(b.name));
  }

  /** The database of that name if it is open and known, else undefined (then use `get`). Lets the
   * per-request path skip a promise. */
  opened(name: string): Database | undefined {
    return this.ready.get(name);
  }

  /** The open database of that name; 400 for a malformed name, 404 for an unknown one. */
  get(name: string): Promise<Database> {
    const opened = this.open.get(name);
    if (opened) return opened;
    if (!isValidDatabaseName(name)) return Promise.reject(invalidName());
    if (!this.known.has(name)) return Promise.reject(notFound(`Database "${name}" not found.`));
    const file = this.fileOf(name);
    if (!existsSync(file)) return Promise.reject(notFound(`Database "${name}" not found.`));
    const promise = this.openFile(name, file);
    this.open.set(name, promise);
    promise.then(
      (db) => {
        if (this.open.get(name) === promise) this.ready.set(name, db);
      },
      () => this.open.delete(name),
    );
    return promise;
  }

  /** Creates a database file with Cairn's internal schema (and the `users` collection). */
  async create(name: string): Promise<DatabaseInfo> {
    if (!isValidDatabaseName(name)) throw invalidName();
    if (this.known.has(name)) throw conflict(`Database "${name}" already exists.`);
    if (this.closing) throw new Error('registry is closing');
    const info = { name, created: nowIso() };
    const promise = this.openFile(name, this.fileOf(name));
    this.open.set(name, promise);
    try {
      await promise;
    } catch (err) {
      this.open.delete(name);
      throw err;
    }
    await this.system.run('INSERT INTO _databases (name, created) VALUES (?, ?)', [name, info.created]);
    this.known.set(name, info);
    if (this.open.get(name) === promise) this.ready.set(name, await promise);
    return info;
  }

  /**
   * Undoes a `create` made moments ago (a migration that created the database failed): closes it and
   * removes its files and its entry. Not a way to delete databases that hold data.
   */
  async discard(name: string): Promise<void> {
    if (!this.known.has(name)) return;
    const opened = this.open.get(name);
    this.open.delete(name);
    this.ready.delete(name);
    this.known.delete(name);
    const db = await opened?.catch(() => undefined);
    await db?.close();
    for (const suffix of ['', '-wal', '-shm']) rmSync(this.fileOf(name) + suffix, { force: true });
    await this.system.run('DELETE FROM _databases WHERE name = ?', [name]);
  }

  /**
   * Learns databases another process on this data directory created (`cairn migrate` beside a
   * running server). Never forgets one: a database is not deleted through Cairn.
   */
  async reload(): Promise<void> {
    for (const row of await this.system.all<DatabaseInfo>('SELECT name, created FROM _databases ORDER BY name')) {
      if (!this.known.has(row.name)) this.known.set(row.name, row);
    }
  }

  /** Closes every database; waits for running transactions to finish first. */
  async close(): Promise<void> {
    this.closing = true;
    this.ready.clear();
    const dbs = await Promise.allSettled([...this.open.values()]);
    for (const r of dbs) if (r.status === 'fulfilled') await r.value.close();
    this.open.clear();
    await this.logsDb?.close();
    await this.systemDb?.close();
  }

  private fileOf(name: string): string {
    // The name passed isValidDatabaseName, so it cannot leave the directory.
    return path.join(this.options.dir, 'databases', `${name}.db`);
  }

  private async openFile(name: string, file: string): Promise<Database> {
    const db = new SqliteDatabase(name, file);
    try {
      await applySchemaSteps(db, this.options.databaseSteps);
    } catch (err) {
      await db.close();
      throw err;
    }
    return db;
  }
}

function invalidName() {
  return badRequest('Invalid database name: use 1-63 lower-case letters, digits and underscores, starting with a letter.', {
    name: { code: 'validation_invalid_database_name', message: 'Must match ^[a-z][a-z0-9_]{0,62}$.' },
  });
}
