import BetterSqlite3 from 'better-sqlite3';
import type { Database, Dialect, RunResult, Transaction } from '../types.ts';
import { FALLBACK_AUTOCHECKPOINT, unwatchCheckpoints, watchCheckpoints } from './checkpointer.ts';
import { sqliteDialect } from './dialect.ts';

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

function bindable(params: readonly unknown[] | undefined): unknown[] {
  if (params === undefined || params.length === 0) return [];
  const out = new Array(params.length);
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    // better-sqlite3 binds neither booleans nor undefined.
    out[i] = v === undefined ? null : v === true ? 1 : v === false ? 0 : v;
  }
  return out;
}

function allOn<T>(cache: StatementCache, sql: string, params?: readonly unknown[]): T[] {
  return cache.get(sql).all(...bindable(params)) as T[];
}

function getOn<T>(cache: StatementCache, sql: string, params?: readonly unknown[]): T | undefined {
  return cache.get(sql).get(...bindable(params)) as T | undefined;
}

function runOn(cache: StatementCache, sql: string, params?: readonly unknown[]): RunResult {
  const info = cache.get(sql).run(...bindable(params));
  return { changes: info.changes };
}

/** A FIFO mutex: the single SQLite writer connection is held by one transaction at a time. */
class WriteLock {
  private held = false;
  private readonly waiters: Array<() => void> = [];

  get isHeld(): boolean {
    return this.held;
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

/**
 * One SQLite database file behind the async storage interface. Two connections: reads outside a
 * transaction go to a reader connection and never wait for a writer; writes and transactions share
 * the writer connection under a FIFO lock, because an async transaction on one connection must not
 * let other requests' statements interleave into it.
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
  private closed = false;
  private readonly checkpointed: boolean;

  constructor(
    readonly name: string,
    readonly file: string,
  ) {
    this.writer = openConnection(file, false);
    this.reader = openConnection(file, true);
    // Checkpoints run in a thread (checkpointer.ts), not inside some request's commit.
    this.checkpointed = watchCheckpoints(file);
    if (this.checkpointed) this.writer.pragma(`wal_autocheckpoint = ${FALLBACK_AUTOCHECKPOINT}`);
    this.writeStatements = new StatementCache(this.writer);
    this.readStatements = new StatementCache(this.reader);
    this.begin = this.writer.prepare('BEGIN IMMEDIATE');
    this.commit = this.writer.prepare('COMMIT');
    this.rollback = this.writer.prepare('ROLLBACK');
  }

  async all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return allOn<T>(this.readStatements, sql, params);
  }

  async get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return getOn<T>(this.readStatements, sql, params);
  }

  async run(sql: string, params?: readonly unknown[]): Promise<RunResult> {
    if (!this.lock.isHeld) return runOn(this.writeStatements, sql, params);
    await this.lock.acquire();
    try {
      return runOn(this.writeStatements, sql, params);
    } finally {
      this.lock.release();
    }
  }

  async exec(sql: string): Promise<void> {
    await this.lock.acquire();
    try {
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
    const tx = new SqliteTransaction(this.writer, this.writeStatements, this.dialect, () => {
      this.readStatements.clear();
    });
    let result: T;
    try {
      this.begin.run();
      try {
        result = await fn(tx);
        this.commit.run();
      } catch (err) {
        if (this.writer.inTransaction) this.rollback.run();
        throw err;
      } finally {
        tx.finish();
      }
    } finally {
      this.lock.release();
    }
    await tx.runAfterCommit();
    return result;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Wait for a running transaction so it commits before the file closes.
    await this.lock.acquire();
    try {
      if (this.checkpointed) unwatchCheckpoints(this.file);
      this.reader.close();
      this.writer.close();
    } finally {
      this.lock.release();
    }
  }
}

class SqliteTransaction implements Transaction {
  private finished = false;
  private savepoints = 0;
  private readonly callbacks: Array<() => void | Promise<void>> = [];

  constructor(
    private readonly conn: Connection,
    private readonly statements: StatementCache,
    readonly dialect: Dialect,
    private readonly onSchemaChange: () => void,
  ) {}

  private check(): void {
    // A statement issued after the transaction ended would run outside it, without the lock.
    if (this.finished) throw new Error('transaction already finished');
  }

  async all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    this.check();
    return allOn<T>(this.statements, sql, params);
  }

  async get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    this.check();
    return getOn<T>(this.statements, sql, params);
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
    }
  }

  afterCommit(fn: () => void | Promise<void>): void {
    this.callbacks.push(fn);
  }

  finish(): void {
    this.finished = true;
  }

  async runAfterCommit(): Promise<void> {
    for (const fn of this.callbacks) {
      try {
        await fn();
      } catch (err) {
        // The transaction is committed; a failing follow-up must not turn it into an error answer.
        process.emitWarning(`after-commit callback failed: ${(err as Error).message}`);
      }
    }
  }
}
