import BetterSqlite3 from 'better-sqlite3';
import type { Sql } from '../sql.ts';
import type { Database, Dialect, Queryable, Row, RunResult, StatementResult, Transaction } from '../types.ts';
import { allInOrder } from '../within.ts';
import { checkpointsSettled, FALLBACK_AUTOCHECKPOINT, unwatchCheckpoints, watchCheckpoints } from './checkpointer.ts';
import { sqliteDialect } from './dialect.ts';
import { bindable } from '../bind.ts';
import { registerSuperusers } from './superusers.ts';

type Connection = BetterSqlite3.Database;
type Statement = BetterSqlite3.Statement;

// PocketBase's connection settings: WAL so readers never wait for the writer, NORMAL sync (durable
// at each checkpoint, safe against application crashes), a generous busy timeout for the CLI
// writing while a server runs.
export const PRAGMAS: readonly string[] = [
  'journal_mode = WAL',
  'synchronous = NORMAL',
  'busy_timeout = 10000',
  'journal_size_limit = 200000000',
  'foreign_keys = ON',
  'temp_store = MEMORY',
  'cache_size = -16000',
];

const STATEMENT_CACHE_LIMIT = 1000;

function openConnection(file: string, readonly: boolean): Connection {
  const conn = new BetterSqlite3(file, { readonly, fileMustExist: readonly });
  for (const pragma of PRAGMAS) {
    if (readonly && pragma.startsWith('journal_mode')) continue;
    conn.pragma(pragma);
  }
  return conn;
}

/** Prepared statements are kept per connection: preparing costs more than running a lookup by id. */
class StatementCache {
  private readonly statements = new Map<string, Statement>();

  constructor(private readonly conn: Connection) {}

  get(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (stmt === undefined) {
      stmt = this.conn.prepare(sql);
      // Generated SQL (filters) is unbounded; dropping the whole cache now and then is cheaper than LRU
      // bookkeeping on every hit.
      if (this.statements.size >= STATEMENT_CACHE_LIMIT) this.statements.clear();
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  clear(): void {
    this.statements.clear();
  }
}


function allOn<T>(cache: StatementCache, sql: string, params?: readonly unknown[]): T[] {
  return cache.get(sql).all(...bindable(params)) as T[];
}

function getOn<T>(cache: StatementCache, sql: string, params?: readonly unknown[]): T | undefined {
  return cache.get(sql).get(...bindable(params)) as T | undefined;
}

function runOn(cache: StatementCache, sql: string, params?: readonly unknown[]): RunResult {
  const info = cache.get(sql).run(...bindable(params));
  return { changes: info.changes, lastInsertRowid: Number(info.lastInsertRowid) };
}

/** A FIFO mutex: the single SQLite writer connection is held by one transaction at a time. */
class WriteLock {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  get isHeld(): boolean {
    return this.held;
  }

  get isWanted(): boolean {
    return this.waiters.length > 0;
  }

  acquire(): Promise<void> {
    if (!this.held) {
      this.held = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  release(): void {
    const next = this.waiters.shift();
    if (next) next();
    else this.held = false;
  }
}

// Most transactions one commit may carry (see WriteGroup).
const MAX_GROUP = 64;

/**
 * The open SQLite transaction that consecutive `transaction()` calls share (group commit). A commit
 * writes every page the transaction touched to the WAL, and most writes touch the same few pages (the
 * last leaf of a table or an index they append to): committed one by one, each writes those pages
 * again; committed together, once. So a transaction runs inside a savepoint of the group, and the group
 * commits at the end of the event loop turn (when every request that arrived in it has had its
 * transaction run), or at once when it is full or something else needs the writer. A member resolves
 * only after that commit: nothing is answered before it is durable, and a failed commit fails them all.
 */
class WriteGroup {
  members = 0;
  flushScheduled = false;
  readonly committed: Promise<void>;
  resolve!: () => void;
  reject!: (err: unknown) => void;

  constructor() {
    this.committed = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    // Members await it; a group whose members all failed has nobody to hear a failed commit.
    this.committed.catch(() => {});
  }
}

/**
 * One SQLite database file behind the async storage interface. Two connections: reads outside a
 * transaction go to a reader connection and never wait for a writer; writes and transactions share
 * the writer connection under a FIFO lock, because an async transaction on one connection must not
 * let other requests' statements interleave into it. Transactions are committed in groups
 * (WriteGroup).
 */
export class SqliteDatabase implements Database {
  readonly dialect: Dialect = sqliteDialect;
  private readonly writer: Connection;
  private readonly reader: Connection;
  private readonly writeStatements: StatementCache;
  private readonly readStatements: StatementCache;
  private readonly lock = new WriteLock();
  // Transaction control runs on every write: prepared once rather than parsed by exec() each time.
  private readonly begin: Statement;
  private readonly commit: Statement;
  private readonly rollback: Statement;
  private readonly savepoint: Statement;
  private readonly releaseSavepoint: Statement;
  private readonly rollbackToSavepoint: Statement;
  private readonly beginRead: Statement;
  private readonly commitRead: Statement;
  /** Whether the reader holds a read transaction (see `snapshot`). */
  private reading = false;
  private group?: WriteGroup;
  private closed = false;
  private readonly checkpointed: boolean;

  /** `superusers`: the administrators, for a data database's `_superusers` (sqlite/superusers.ts). */
  constructor(
    readonly name: string,
    readonly file: string,
    superusers?: () => unknown[][],
  ) {
    this.writer = openConnection(file, false);
    this.reader = openConnection(file, true);
    if (superusers !== undefined) {
      registerSuperusers(this.writer, superusers);
      registerSuperusers(this.reader, superusers);
    }
    // Checkpoints run in a thread (checkpointer.ts), not inside some request's commit.
    this.checkpointed = watchCheckpoints(file);
    if (this.checkpointed) this.writer.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT}`);
    this.writeStatements = new StatementCache(this.writer);
    this.readStatements = new StatementCache(this.reader);
    this.begin = this.writer.prepare('BEGIN IMMEDIATE');
    this.commit = this.writer.prepare('COMMIT');
    this.rollback = this.writer.prepare('ROLLBACK');
    this.savepoint = this.writer.prepare('SAVEPOINT cairn_member');
    this.releaseSavepoint = this.writer.prepare('RELEASE cairn_member');
    this.rollbackToSavepoint = this.writer.prepare('ROLLBACK TO cairn_member');
    this.beginRead = this.reader.prepare('BEGIN');
    this.commitRead = this.reader.prepare('COMMIT');
  }

  /**
   * Reads of one event loop turn share a read transaction. A statement outside one starts and ends
   * its own, and in WAL mode that takes and drops locks on the shared-memory index with system calls:
   * about ten times what a lookup by id costs. The transaction ends at the end of the turn, and at
   * once whenever the writer commits, so a read never misses a commit that came before it in this
   * process (another process's commits show from the next turn).
   */
  private snapshot(): void {
    if (this.reading) return;
    this.beginRead.run();
    this.reading = true;
    setImmediate(this.endRead);
  }

  private readonly endRead = (): void => {
    if (!this.reading) return;
    this.reading = false;
    if (this.reader.inTransaction) this.commitRead.run();
  };

  /** One after the other: each is a synchronous call, nothing to overlap. */
  allEach(queries: readonly Sql[]): Promise<Row[][]> {
    return allInOrder(this, queries);
  }

  async all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    this.snapshot();
    return allOn<T>(this.readStatements, sql, params);
  }

  async get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    this.snapshot();
    return getOn<T>(this.readStatements, sql, params);
  }

  /** In process, every read is already as cheap as a read can be. */
  lookup<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.get<T>(sql, params);
  }

  async run(sql: string, params?: readonly unknown[]): Promise<RunResult> {
    if (!this.lock.isHeld && !this.group) {
      try {
        return runOn(this.writeStatements, sql, params);
      } finally {
        this.endRead();
      }
    }
    await this.lock.acquire();
    try {
      // Its own commit, as the caller expects when it resolves: the open group goes first.
      this.commitGroup();
      return runOn(this.writeStatements, sql, params);
    } finally {
      this.endRead();
      this.lock.release();
    }
  }

  async exec(sql: string): Promise<void> {
    await this.lock.acquire();
    try {
      this.commitGroup();
      this.endRead();
      this.writer.exec(sql);
      // Schema changes can invalidate cached statements' column lists.
      this.writeStatements.clear();
      this.readStatements.clear();
    } finally {
      this.lock.release();
    }
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    if (this.closed) throw new Error(`database "${this.name}" is closed`);
    await this.lock.acquire();
    let group: WriteGroup | undefined;
    let done: { result: T; tx: SqliteTransaction };
    try {
      if (!this.group) {
        this.begin.run();
        this.group = new WriteGroup();
      }
      group = this.group;
      done = await this.member(fn, group);
    } catch (err) {
      this.endTurn();
      // A failure too is answered after the group's commit: it was decided on the group's writes (a
      // related record an earlier member deleted), and what its caller reads next must show them.
      await group?.committed.catch(() => {});
      throw err;
    }
    this.endTurn();
    await group.committed;
    await done.tx.runAfterCommit();
    return done.result;
  }

  /** Runs one transaction inside the group, in a savepoint: its failure undoes only its own work. */
  private async member<T>(fn: (tx: Transaction) => Promise<T>, group: WriteGroup): Promise<{ result: T; tx: SqliteTransaction }> {
    const tx = new SqliteTransaction(this.writer, this.writeStatements, this.dialect, () => {
      this.readStatements.clear();
    });
    this.savepoint.run();
    try {
      const result = await fn(tx);
      this.releaseSavepoint.run();
      group.members++;
      tx.finish();
      return { result, tx };
    } catch (err) {
      tx.finish();
      if (this.writer.inTransaction) {
        this.rollbackToSavepoint.run();
        this.releaseSavepoint.run();
      } else {
        // SQLite rolled the whole transaction back (an I/O error, a full disk): the members before
        // this one are gone too, and must not be reported as saved.
        this.group = undefined;
        group.reject(err);
      }
      throw err;
    }
  }

  /** After a member: commits the group when it is full, else leaves it open for the transactions
   * that arrive in this event loop turn (the next one commits it); then hands the writer on. A
   * plain write or schema change that gets the writer meanwhile commits the group first. */
  private endTurn(): void {
    const group = this.group;
    if (group && group.members >= MAX_GROUP) this.commitGroup();
    else if (group && !group.flushScheduled) {
      group.flushScheduled = true;
      setImmediate(() => void this.flush(group));
    }
    this.lock.release();
  }

  private async flush(group: WriteGroup): Promise<void> {
    await this.lock.acquire();
    try {
      if (this.group === group) this.commitGroup();
    } finally {
      this.lock.release();
    }
  }

  /** Commits the open group, if any (the caller holds the lock). */
  private commitGroup(): void {
    const group = this.group;
    if (!group) return;
    this.group = undefined;
    try {
      if (group.members > 0) this.commit.run();
      else this.rollback.run();
      this.endRead();
      group.resolve();
    } catch (err) {
      if (this.writer.inTransaction) this.rollback.run();
      group.reject(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Wait for a running transaction so it commits before the file closes.
    await this.lock.acquire();
    try {
      this.commitGroup();
      this.endRead();
      if (this.checkpointed) {
        // The checkpoint thread lets go of the file first, so that the writer, closing last, copies
        // the WAL into the database and removes it: a clean close leaves no WAL to recover.
        unwatchCheckpoints(this.file);
        await checkpointsSettled();
      }
      this.reader.close();
      this.writer.close();
    } finally {
      this.lock.release();
    }
  }
}

class SqliteTransaction implements Transaction {
  private finished = false;
  /** After `commitWith`: the transaction's statements are over (it commits with the group). */
  private ended = false;
  private savepoints = 0;
  /** Savepoints open now: `commitWith` inside one is `get`. */
  private depth = 0;
  private readonly callbacks: Array<() => void | Promise<void>> = [];

  constructor(
    private readonly conn: Connection,
    private readonly statements: StatementCache,
    readonly dialect: Dialect,
    private readonly onSchemaChange: () => void,
  ) {}

  private check(): void {
    // A statement issued after the transaction ended would run outside it, without the lock.
    if (this.finished || this.ended) throw new Error('transaction already finished');
  }

  async all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.allNow<T>(sql, params);
  }

  allNow<T>(sql: string, params?: readonly unknown[]): T[] {
    this.check();
    return allOn<T>(this.statements, sql, params);
  }

  async get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.getNow<T>(sql, params);
  }

  getNow<T>(sql: string, params?: readonly unknown[]): T | undefined {
    this.check();
    return getOn<T>(this.statements, sql, params);
  }

  async commitWith<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    this.check();
    // A statement without rows (an INSERT without RETURNING) is run: better-sqlite3's get refuses it.
    const stmt = this.statements.get(sql);
    const row = stmt.reader ? (stmt.get(...bindable(params)) as T | undefined) : (stmt.run(...bindable(params)), undefined);
    // Nothing follows it on SQLite either, so a caller that would break that fails here too.
    if (this.depth === 0) this.ended = true;
    return row;
  }

  async run(sql: string, params?: readonly unknown[]): Promise<RunResult> {
    this.check();
    return runOn(this.statements, sql, params);
  }

  async exec(sql: string): Promise<void> {
    this.check();
    this.conn.exec(sql);
    this.statements.clear();
    this.onSchemaChange();
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    this.check();
    const name = `sp${++this.savepoints}`;
    const pendingCallbacks = this.callbacks.length;
    this.conn.exec(`SAVEPOINT ${name}`);
    this.depth++;
    try {
      const result = await fn(this);
      this.conn.exec(`RELEASE ${name}`);
      return result;
    } catch (err) {
      this.conn.exec(`ROLLBACK TO ${name}`);
      this.conn.exec(`RELEASE ${name}`);
      // Follow-ups of work that was rolled back must not run.
      this.callbacks.length = pendingCallbacks;
      throw err;
    } finally {
      this.depth--;
    }
  }

  afterCommit(fn: () => void | Promise<void>): void {
    this.callbacks.push(fn);
  }

  async statement(sql: string, maxRows: number): Promise<StatementResult> {
    this.check();
    // Prepared outside the cache: the text is an administrator's, used once.
    const stmt = this.conn.prepare(sql);
    const columns = stmt.reader ? stmt.columns().map((c) => ({ name: c.name, type: c.type ?? '' })) : [];
    let result: StatementResult;
    if (stmt.reader) {
      const rows: unknown[][] = [];
      for (const row of stmt.raw(true).iterate() as IterableIterator<unknown[]>) {
        if (rows.length >= maxRows) break;
        rows.push(row);
      }
      result = { columns, rows, changes: 0 };
    } else {
      result = { columns, rows: [], changes: stmt.run().changes };
    }
    this.statements.clear();
    this.onSchemaChange();
    return result;
  }

  finish(): void {
    this.finished = true;
  }

  async runAfterCommit(): Promise<void> {
    for (const fn of this.callbacks) {
      try {
        // Most follow-ups are synchronous: no turn of the microtask queue for them.
        const pending = fn();
        if (pending) await pending;
      } catch (err) {
        // The transaction is committed; a failing follow-up must not turn it into an error answer.
        process.emitWarning(`after-commit callback failed: ${(err as Error).message}`);
      }
    }
  }
}

/**
 * A short-lived read-only connection to a database file, for a background worker asking whether a
 * database it has not opened holds work for it (StorageBackend.peek): no writer, no statement cache,
 * no checkpoints, so asking costs about a file open and the query, and nothing stays in memory.
 */
export function peekSqlite<T>(file: string, fn: (q: Queryable) => Promise<T>): Promise<T> {
  const conn = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  const refuse = (): never => {
    throw new Error('a peek is read-only');
  };
  const q: Queryable = {
    dialect: sqliteDialect,
    all: async <R>(sql: string, params?: readonly unknown[]) => conn.prepare(sql).all(...bindable(params)) as R[],
    get: async <R>(sql: string, params?: readonly unknown[]) => conn.prepare(sql).get(...bindable(params)) as R | undefined,
    run: async () => refuse(),
    exec: async () => refuse(),
    transaction: async () => refuse(),
  };
  return fn(q).finally(() => conn.close());
}
