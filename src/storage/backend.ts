import type { SchemaStep } from './schema-steps.ts';
import type { Database, Dialect, Queryable, Transaction } from './types.ts';

/**
 * Where a driver keeps databases: SQLite files under the data directory, or PostgreSQL schemas of one
 * database. The registry (registry.ts) decides which names exist; a backend only makes, opens and
 * removes their storage.
 */
export interface StorageBackend {
  readonly dialect: Dialect;
  /**
   * Whether several processes may share this storage as one instance (PostgreSQL): then state that
   * would otherwise sit in the data directory (the instance secret, migration files) is kept in it.
   */
  readonly shared: boolean;
  /** A short description for logs and errors (a path, or a URL without its password). */
  readonly location: string;
  /** Connects (or opens the directory) and returns the instance's own database. */
  openSystem(): Promise<Database>;
  /**
   * Opens the request log's database (`registry.logs`, src/logs): not a data database, never named by
   * `x-dbname`. SQLite: `<dir>/logs.db`.
   */
  openLogs(): Promise<Database>;
  /** Opens the storage of an existing database; undefined when it is missing (a deleted file). */
  open(name: string): Promise<Database | undefined>;
  /**
   * Runs read-only queries on an existing database without opening it for service (SQLite: a
   * read-only connection closed afterwards); undefined when it is missing. See DatabaseRegistry.peek.
   */
  peek<T>(name: string, fn: (q: Queryable) => Promise<T>): Promise<T | undefined>;
  /** Makes the storage of a new database and opens it. */
  create(name: string): Promise<Database>;
  /** Removes a database's storage (undoing a `create`); `db` is closed first. */
  remove(name: string, db: Database | undefined): Promise<void>;
  /** Brings a database's internal tables up to date (each step once). */
  applySteps(db: Database, steps: readonly SchemaStep[]): Promise<void>;
  /**
   * Takes a lock held across processes until released or until this process dies (PostgreSQL's
   * session advisory locks); undefined when another holder has it. Absent on SQLite, where
   * domains keep a lock row instead (a file has no sessions).
   */
  tryLock?(key: string): Promise<(() => Promise<void>) | undefined>;
  /**
   * Waits for, then holds until `tx` ends, the lock named `key`, shared by every process on this
   * storage (PostgreSQL's transaction advisory locks): work done under it runs on one node at a time.
   * Absent on SQLite, where a write transaction already keeps every other writer of the file out.
   */
  lockInTransaction?(tx: Transaction, key: string): Promise<void>;
  /**
   * One transaction over several databases, where the driver has one (PostgreSQL: they are schemas of
   * one database). Absent on SQLite, where each file has its own transactions.
   */
  transactionAcross?<T>(dbs: readonly Database[], fn: (txs: Transaction[]) => Promise<T>): Promise<T>;
  /** Notices between the processes sharing this storage (PostgreSQL); absent where one process owns it. */
  readonly notifications?: Notifications;
  /**
   * Where one process serves the storage and commands may run beside it (SQLite files): word that a
   * cache topic changed, from one process to the others, without delivery guarantees.
   */
  readonly processNotices?: ProcessNotices;
  close(): Promise<void>;
}

/** Cache notices between the processes opening one data directory (sqlite/folder-notices.ts). */
export interface ProcessNotices {
  /** Tells the other processes that `topic` changed (of database `key`, where there is one). */
  announce(topic: string, key?: string): void;
  /** Calls `fn` with each topic (and key) another process announces. */
  listen(fn: (topic: string, key: string | undefined) => void): void;
}

/**
 * A backend's `lockInTransaction`, handed to the domains that serialize a decision across processes
 * (absent on SQLite, whose write transactions already come one at a time).
 */
export type TransactionLock = (tx: Transaction, key: string) => Promise<void>;

/** Notices between the processes of one instance (see postgres/notifier.ts). */
export interface Notifications {
  /** Calls `fn` with the payload of every notice on `channel`, from any process, this one included. */
  listen(channel: string, fn: (payload: string) => void): () => void;
  /** Calls `fn` when notices may have been missed (the listening connection was lost and is back). */
  onResync(fn: () => void): () => void;
  /** Sends a notice in a transaction: delivered when, and only if, it commits. */
  notify(tx: Queryable, channel: string, payload: string): Promise<void>;
  /** Resolves once notices are being received. */
  ready(): Promise<void>;
  /** This process's name among the listeners (`peers`), which it gives when it answers a notice. */
  readonly tag: string;
  /** The names of the processes listening on this database now, this one included. */
  peers(q: Queryable): Promise<string[]>;
}

/** The storage could not be reached or opened at start: reported as one line, without a stack. */
export class StorageStartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StorageStartError';
  }
}
