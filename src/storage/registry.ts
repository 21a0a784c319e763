import { badRequest, conflict, notFound } from '../errors.ts';
import { isReservedDatabaseName, isValidDatabaseName } from '../lib/identifiers.ts';
import { nowIso } from '../lib/time.ts';
import type { StorageBackend } from './backend.ts';
import type { SchemaStep } from './schema-steps.ts';
import type { Database, Dialect, Queryable, Transaction } from './types.ts';

export interface DatabaseInfo {
  name: string;
  created: string;
}

export interface RegistryOptions {
  /** The data directory. */
  dir: string;
  /** Where databases are kept (SQLite files or PostgreSQL schemas). */
  backend: StorageBackend;
  /** Internal schema of system.db. */
  systemSteps: readonly SchemaStep[];
  /** Internal schema of every database; runs when a database is created and each time it opens. */
  databaseSteps: readonly SchemaStep[];
  /** Schema of the request log's database (`logs`). */
  logSteps?: readonly SchemaStep[];
}

export const DEFAULT_DATABASE = 'main';

/**
 * The only place a database name becomes storage (a file, or a PostgreSQL schema, by the backend).
 * Databases are listed in the system database; a name that is not listed there is unknown (404), and
 * nothing but `create` makes a new one.
 */
export class DatabaseRegistry {
  private systemDb?: Database;
  private logsDb?: Database;
  private readonly known = new Map<string, DatabaseInfo>();
  private readonly open = new Map<string, Promise<Database>>();
  /** The databases of `open` whose opening has finished, for the synchronous lookup of `opened`. */
  private readonly ready = new Map<string, Database>();
  /** Databases made by `begin` and not yet published: claimed in `open`, not in `known`. */
  private readonly pending = new Map<string, DatabaseInfo>();
  /** The `create` calls under way, by name. */
  private readonly creating = new Map<string, Promise<DatabaseInfo>>();
  private closing = false;
  /**
   * Called on a new database before it is listed or served (pb_migrations run here); throwing
   * removes it again.
   */
  onCreating?: (name: string) => Promise<void>;
  /** Called once a new database is listed and served (the app tells the other nodes). */
  onCreated?: (name: string) => Promise<void>;

  constructor(private readonly options: RegistryOptions) {}

  get dir(): string {
    return this.options.dir;
  }

  get backend(): StorageBackend {
    return this.options.backend;
  }

  get dialect(): Dialect {
    return this.options.backend.dialect;
  }

  /** Opens the system database, loads the database list and makes sure `main` exists. */
  async start(): Promise<void> {
    this.systemDb = await this.options.backend.openSystem();
    await this.options.backend.applySteps(this.systemDb, this.options.systemSteps);
    // The request log has a database of its own (logs.db on SQLite): its writes never wait for, nor
    // hold up, a data database's.
    this.logsDb = await this.options.backend.openLogs();
    await this.options.backend.applySteps(this.logsDb, this.options.logSteps ?? []);
    await this.reload();
    if (!this.known.has(DEFAULT_DATABASE)) {
      try {
        await this.create(DEFAULT_DATABASE);
      } catch (err) {
        // Another node sharing the database made it at the same moment.
        await this.reload();
        if (!this.known.has(DEFAULT_DATABASE)) throw err;
      }
    }
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

  /** The names of the databases open in this process (the others are opened on first use). */
  openedNames(): string[] {
    return [...this.ready.keys()];
  }

  /**
   * Asks a database something without opening it for service. Databases open lazily, when a request
   * names them or a worker has work in them, so a server with many databases starts fast and holds
   * only those in use; the workers (webhook delivery, cron, workflows, pruning) find their work in the
   * others through this: an open database answers itself, another through a short-lived read-only
   * handle (`StorageBackend.peek`). `fallback` is the answer when that handle cannot tell (the
   * database's internal tables are older than this version, which only opening brings up to date):
   * callers pass the answer that makes them open it.
   */
  async peek<T>(name: string, fn: (q: Queryable) => Promise<T>, fallback: T): Promise<T> {
    const db = this.ready.get(name);
    if (db) return fn(db);
    try {
      const answer = await this.options.backend.peek(name, fn);
      return answer === undefined ? fallback : answer;
    } catch {
      return fallback;
    }
  }

  /**
   * The database a request names: 400 for a malformed name, 404 for one that is not listed, including
   * one still being made (`begin`), which the work making it may yet remove.
   */
  async served(name: string): Promise<Database> {
    if (!this.known.has(name)) {
      if (!isValidDatabaseName(name)) throw invalidName(name);
      await this.reload();
      if (!this.known.has(name)) throw notFound(`Database "${name}" not found.`);
    }
    return this.get(name);
  }

  /**
   * The open database of that name; 400 for a malformed name, 404 for an unknown one. Also a database
   * still being made, for the work making it (requests go through `served`).
   */
  get(name: string): Promise<Database> {
    const opened = this.open.get(name);
    if (opened) return opened;
    if (!isValidDatabaseName(name)) return Promise.reject(invalidName(name));
    // A database opened now would never be closed (a background task finishing after close).
    if (this.closing) return Promise.reject(new Error('registry is closing'));
    if (!this.known.has(name)) return this.getUnknown(name);
    const promise = this.openExisting(name);
    this.open.set(name, promise);
    promise.then(
      (db) => {
        if (this.open.get(name) === promise) this.ready.set(name, db);
      },
      () => this.open.delete(name),
    );
    return promise;
  }

  /** A name this process has not seen: another process (a node, the CLI) may have created it since. */
  private async getUnknown(name: string): Promise<Database> {
    await this.reload();
    if (!this.known.has(name)) throw notFound(`Database "${name}" not found.`);
    return this.get(name);
  }

  /**
   * Creates a database with Cairn's internal schema (and the `users` collection), and serves it. A
   * create of a name whose create is under way here waits for it and is then answered as if it came
   * second: a 409 once the name is served (never before, when the first could still fail), or a
   * create of its own when the first failed.
   */
  async create(name: string): Promise<DatabaseInfo> {
    const earlier = this.creating.get(name);
    if (earlier) {
      await earlier.catch(() => undefined);
      return this.create(name);
    }
    const creating = this.createNow(name);
    this.creating.set(name, creating);
    try {
      return await creating;
    } finally {
      if (this.creating.get(name) === creating) this.creating.delete(name);
    }
  }

  private async createNow(name: string): Promise<DatabaseInfo> {
    const db = await this.begin(name);
    try {
      await this.system.transaction((tx) => this.register(tx, name));
    } catch (err) {
      // Not removed: on a unique violation the storage is the other creator's.
      this.open.delete(name);
      this.pending.delete(name);
      await db.close();
      throw err;
    }
    return this.publish(name);
  }

  /**
   * Makes a database that is neither listed nor served yet: `register` lists it in a transaction of
   * the system database, `publish` serves it once that has committed, `discard` removes it instead.
   * Work that creates a database and may fail afterwards (a migration) lists it in its own
   * transaction, so that no request, here or on another node, writes into a database that is then
   * removed.
   */
  async begin(name: string): Promise<Database> {
    if (!isValidDatabaseName(name)) throw invalidName(name);
    if (!this.known.has(name)) await this.reload();
    // `open` holds a create under way from here on (no await between this check and the claim below):
    // two creates of one name would otherwise make its file together, each connection waiting on
    // the other's write lock in this one thread.
    if (this.known.has(name) || this.open.has(name)) throw conflict(`Database "${name}" already exists.`);
    if (this.closing) throw new Error('registry is closing');
    const promise = this.prepare(name, this.options.backend.create(name));
    this.open.set(name, promise);
    this.pending.set(name, { name, created: nowIso() });
    let db: Database;
    try {
      db = await promise;
    } catch (err) {
      this.open.delete(name);
      this.pending.delete(name);
      throw err;
    }
    if (this.onCreating) {
      try {
        await this.onCreating(name);
      } catch (err) {
        await this.discard(name);
        throw err;
      }
    }
    return db;
  }

  /**
   * Lists a database made by `begin` in `tx` (a transaction of the system database); 409 if the name
   * is taken. Under the name's listing lock until `tx` ends, which `discard` takes too: a failed
   * creator does not remove the storage of a name another process listed meanwhile.
   */
  async register(tx: Transaction, name: string): Promise<void> {
    const info = this.pending.get(name);
    if (!info) throw new Error(`database "${name}" is not being created`);
    await this.options.backend.lockInTransaction?.(tx, listingLock(name));
    try {
      await tx.run('INSERT INTO _databases (name, created) VALUES (?, ?)', [name, info.created]);
    } catch (err) {
      if (this.dialect.classifyError(err).kind === 'unique') throw conflict(`Database "${name}" already exists.`);
      throw err;
    }
  }

  /** Serves a database made by `begin` once its listing has committed, and tells the other nodes. */
  async publish(name: string): Promise<DatabaseInfo> {
    const info = this.pending.get(name);
    const opening = this.open.get(name);
    if (!info || !opening) throw new Error(`database "${name}" is not being created`);
    this.pending.delete(name);
    this.known.set(name, this.known.get(name) ?? info);
    const db = await opening;
    if (this.open.get(name) === opening) this.ready.set(name, db);
    await this.onCreated?.(name);
    return info;
  }

  /**
   * Undoes a `create` or `begin` made moments ago (a migration that created the database failed):
   * closes it and removes its files and its entry. Not a way to delete databases that hold data.
   */
  async discard(name: string): Promise<void> {
    const listed = this.known.has(name);
    const opened = this.open.get(name);
    if (!listed && !this.pending.has(name)) return;
    this.open.delete(name);
    this.ready.delete(name);
    this.known.delete(name);
    this.pending.delete(name);
    const db = await opened?.catch(() => undefined);
    if (!listed) {
      // Listed without us: another process made the same name at the same moment (our listing met its
      // row); the storage is its database. Checked under the listing lock, so a listing under way
      // commits first.
      await this.system.transaction(async (tx) => {
        await this.options.backend.lockInTransaction?.(tx, listingLock(name));
        if (await tx.get('SELECT 1 AS found FROM _databases WHERE name = ?', [name])) await db?.close();
        else await this.options.backend.remove(name, db);
      });
      return;
    }
    await this.options.backend.remove(name, db);
    await this.system.run('DELETE FROM _databases WHERE name = ?', [name]);
    // A `reload` that read the row before it was deleted may have learnt the name again meanwhile.
    this.known.delete(name);
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
    await this.options.backend.close();
  }

  private async openExisting(name: string): Promise<Database> {
    const db = await this.options.backend.open(name);
    if (!db) throw notFound(`Database "${name}" not found.`);
    return this.prepare(name, Promise.resolve(db));
  }

  private async prepare(_name: string, opening: Promise<Database>): Promise<Database> {
    const db = await opening;
    try {
      await this.options.backend.applySteps(db, this.options.databaseSteps);
    } catch (err) {
      await db.close();
      throw err;
    }
    return db;
  }
}

function invalidName(name: string) {
  if (isReservedDatabaseName(name)) {
    return badRequest(`"${name}" is reserved and cannot be a database name.`, {
      name: { code: 'validation_reserved_database_name', message: 'public, information_schema, cairn_system and names starting with pg_ are reserved.' },
    });
  }
  return badRequest('Invalid database name: use 1-63 lower-case letters, digits and underscores, starting with a letter.', {
    name: { code: 'validation_invalid_database_name', message: 'Must match ^[a-z][a-z0-9_]{0,62}$.' },
  });
}

/** The lock under which a database's name is listed, and checked before a failed creator removes it. */
function listingLock(name: string): string {
  return `cairn.database.${name}`;
}
