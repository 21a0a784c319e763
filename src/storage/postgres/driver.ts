import { AsyncLocalStorage } from 'node:async_hooks';
import pg from 'pg';
import { ApiError } from '../../errors.ts';
import { quoteIdent } from '../../lib/identifiers.ts';
import type { Sql } from '../sql.ts';
import type { Database, Dialect, Row, RunResult, StatementResult, Transaction } from '../types.ts';
import { EXTENSION_SCHEMA_SQL, helperFunctionsSql, postgresDialect, SETUP_LOCK } from './dialect.ts';
import { toPostgres } from './placeholders.ts';
import { SharedReads } from './shared-reads.ts';
import { inOneWrite, isConnectionError, KEEP_ALIVE, query } from './statements.ts';

// CAIRN_PG_DEBUG=1 warns when code inside a transaction takes a second connection: with a small pool,
// enough such requests at once wait for each other until the connect timeout.
const DEBUG = process.env.CAIRN_PG_DEBUG === '1';
const inTransaction = new AsyncLocalStorage<boolean>();

/** The schema of Cairn's instance tables (admins, settings, database list, migration registry). */
export const SYSTEM_SCHEMA = 'cairn_system';

export interface PgOptions {
  url: string;
  /** Connections in the pool (one pool per process). */
  poolSize: number;
  /**
   * Connections opened at start and kept open while idle (CAIRN_PG_POOL_MIN, at most `poolSize`; 0 when
   * absent); others close after 30 s idle. A new connection costs its request the connection's setup
   * and a new PostgreSQL backend's first statements (4–24 ms and 2–7 ms here, against 0.5 ms for an
   * insert on a used one): a burst after a start or a quiet spell would pay that once per connection.
   */
  minConnections?: number;
  /** A statement running longer is cancelled, so a runaway filter cannot hold a connection. */
  statementTimeoutMs: number;
  /**
   * How long a request waits for a free connection before it is answered 503 (CAIRN_PG_POOL_WAIT_MS):
   * a burst of more requests than connections queues and is served in turn, instead of failing.
   */
  connectTimeoutMs: number;
  /** Requests waiting for a connection at once (CAIRN_PG_POOL_QUEUE): past that a request is answered
   * 503 at once, so a flood cannot pile up unbounded memory and latency. Unbounded when absent. */
  queueLimit?: number;
  /** This node (CAIRN_NODE_ID), set on each connection as `cairn.node` so triggers can name it. */
  node?: string;
}

// Rows read the same on both drivers: integers and counts as numbers, booleans as 1/0 (SQLite has no
// boolean type, and every reader of a row already takes 1/0), JSON as its text (callers parse it).
const TYPE_PARSERS: Record<number, (v: string) => unknown> = {
  16: (v) => (v === 't' ? 1 : 0), // bool
  20: (v) => Number(v), // int8 (COUNT(*), identity columns)
  1700: (v) => Number(v), // numeric
  114: (v) => v, // json
  3802: (v) => v, // jsonb
};

const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    return TYPE_PARSERS[oid] ?? (pg.types.getTypeParser as (oid: number, format?: string) => (v: string) => unknown)(oid, format);
  },
};

/**
 * Errors that are the request's, not the server's: a 400. Class 22 are data exceptions (a NUL byte
 * in text, a number out of range, text too long for an index): values SQLite stores or compares
 * without complaint, which PostgreSQL refuses.
 */
function isDataError(err: unknown): boolean {
  const code = (err as { code?: unknown })?.code;
  return typeof code === 'string' && code.startsWith('22');
}

/** What reaches the client when the database refuses a value (400) or cannot be used right now (503), never a 500. */
function toApiError(err: unknown): unknown {
  if (isDataError(err)) return new ApiError(400, 'The request holds a value the database cannot store or compare (such as a NUL character).');
  if ((err as { code?: string })?.code === '57014') {
    return new ApiError(503, 'The database took too long to answer; try a narrower request.');
  }
  if (isConnectionError(err)) return new ApiError(503, 'The database is unavailable; try again shortly.');
  // A deadlock (40P01) or a serialization failure (40001): PostgreSQL undid this request's
  // transaction for another one's sake; sent again, it is decided after that one.
  const code = (err as { code?: string })?.code;
  if (code === '40P01' || code === '40001') {
    return new ApiError(409, 'The request conflicted with another one changing the same records at the same time; try again.', {}, { 'retry-after': '0' });
  }
  return err;
}

/** Per connection: the schema its search_path names, and the statements prepared on it. */
interface ConnectionState {
  schema?: string;
}

const states = new WeakMap<pg.PoolClient, ConnectionState>();

function stateOf(client: pg.PoolClient): ConnectionState {
  let s = states.get(client);
  if (!s) states.set(client, (s = {}));
  return s;
}

/** A connection's statements name tables of `schema`; `extension` keeps citext's operators in reach. */
function searchPath(schema: string, extension: string): string {
  return `SET search_path TO ${quoteIdent(schema)}, ${quoteIdent(extension)}`;
}

/**
 * Connections kept for shared reads, one per database that reads by key (the system database and the
 * first three others), beside the pool: transactions never wait for them.
 */
const SHARED_READ_CONNECTIONS = 4;

/**
 * The one pool of a process, shared by every Cairn database (each a schema). A connection's
 * search_path is set to the schema of the statement it runs, and only changed when a statement of
 * another schema comes along.
 */
export class PgServer {
  readonly pool: pg.Pool;
  /** Reads by key of concurrent requests, pipelined on connections of their own (`Database.lookup`). */
  readonly shared: SharedReads;
  private readonly lanes: pg.Pool;
  /** The schema holding the citext extension, kept on every search_path so its operators apply. */
  extensionSchema = 'public';
  private closed = false;
  /** Connections kept open while idle (`PgOptions.minConnections`). */
  private readonly kept: number;

  constructor(readonly options: PgOptions) {
    this.kept = Math.min(options.minConnections ?? 0, options.poolSize);
    const config: pg.PoolConfig = {
      connectionString: options.url,
      max: options.poolSize,
      min: this.kept,
      connectionTimeoutMillis: options.connectTimeoutMs,
      idleTimeoutMillis: 30_000,
      ...KEEP_ALIVE,
      statement_timeout: options.statementTimeoutMs,
      application_name: 'cairn',
      types,
      // Statements are written without waiting for the previous one's answer (each keeps its own
      // Sync, so an error ends only its own statement): a transaction's BEGIN travels with its first
      // statement instead of costing a round trip of its own.
      pipeline: true,
      // Custom settings travel in the startup packet: no extra round trip per connection.
      options: options.node ? `-c cairn.node=${options.node.replace(/[^A-Za-z0-9._:-]/g, '_')}` : undefined,
    };
    this.pool = new pg.Pool(config);
    // A lane is kept by its database once opened (shared-reads.ts): nothing to keep here.
    this.lanes = new pg.Pool({ ...config, max: SHARED_READ_CONNECTIONS, min: 0 });
    // A connection that breaks while idle in the pool is removed by pg; without a listener the error
    // would end the process.
    this.pool.on('error', () => {});
    this.lanes.on('error', () => {});
    this.shared = new SharedReads(
      {
        connect: async (schema) => {
          if (this.closed) throw new ApiError(503, 'The server is shutting down.');
          return this.onSchema(await this.lanes.connect(), schema);
        },
        release: (client, err) => this.release(client, err),
      },
      SHARED_READ_CONNECTIONS,
    );
  }

  /** Connects once, so a wrong URL fails start-up, and prepares what every schema relies on. */
  async start(): Promise<void> {
    const client = await this.pool.connect();
    try {
      // Several processes may start at once: the first does the set-up, the others wait for it.
      await client.query('SELECT pg_advisory_lock(hashtext($1))', [SETUP_LOCK]);
      try {
        await client.query('CREATE EXTENSION IF NOT EXISTS citext');
        const ext = await client.query<{ nspname: string }>(toPostgres(EXTENSION_SCHEMA_SQL, true), ['citext']);
        this.extensionSchema = ext.rows[0]?.nspname ?? 'public';
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${SYSTEM_SCHEMA}`);
        await client.query(helperFunctionsSql(this.extensionSchema));
      } finally {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [SETUP_LOCK]);
      }
    } finally {
      client.release();
    }
    void this.fill();
  }

  /**
   * Opens the pool's kept connections, all at once, while the rest of the start goes on. A failure
   * is left to the requests: each opens the connection it needs as before.
   */
  private async fill(): Promise<void> {
    // Held all at once, so each is another connection: the idle ones first, then new ones.
    const opened = await Promise.allSettled(Array.from({ length: this.kept }, () => this.pool.connect()));
    for (const result of opened) if (result.status === 'fulfilled') result.value.release();
  }

  database(name: string, schema: string): PgDatabase {
    return new PgDatabase(this, name, schema);
  }

  /** A connection whose search_path names `schema`. */
  async connect(schema: string): Promise<pg.PoolClient> {
    if (this.closed) throw new ApiError(503, 'The server is shutting down.');
    if (DEBUG && inTransaction.getStore()) process.emitWarning(`a second connection taken inside a transaction:\n${new Error().stack}`);
    const limit = this.options.queueLimit;
    if (limit !== undefined && this.pool.waitingCount >= limit) {
      throw new ApiError(503, 'Too many requests are waiting for the database; try again shortly.');
    }
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (err) {
      throw toApiError(err);
    }
    return this.onSchema(client, schema);
  }

  /** `client` with its search_path naming `schema` (set unless it does already); closed if that fails. */
  private async onSchema(client: pg.PoolClient, schema: string): Promise<pg.PoolClient> {
    const state = stateOf(client);
    if (state.schema === schema) return client;
    try {
      await client.query(searchPath(schema, this.extensionSchema));
      state.schema = schema;
      return client;
    } catch (err) {
      client.release(true);
      throw toApiError(err);
    }
  }

  /**
   * Runs `fn` in one transaction with a handle per database (schemas of this PostgreSQL database):
   * committed when it resolves, rolled back when it rejects; after-commit callbacks run after COMMIT.
   */
  async transactionAcross<T>(dbs: readonly PgDatabase[], fn: (txs: Transaction[]) => Promise<T>): Promise<T> {
    const first = dbs[0]?.schema ?? SYSTEM_SCHEMA;
    const client = await this.connect(first);
    const session = new Session(client, this.extensionSchema);
    let result: T;
    try {
      const txs = dbs.map((db) => new PgTransaction(session, db.schema, db.dialect));
      result = DEBUG ? await inTransaction.run(true, () => fn(txs)) : await fn(txs);
      session.finished = true;
      // A transaction that ran no statement never began; one ended by `commitWith` is over.
      if (session.begun) await client.query('COMMIT');
    } catch (err) {
      session.finished = true;
      try {
        if (session.begun) await client.query('ROLLBACK');
        session.rolledBack();
        this.release(client, err);
      } catch (rollbackErr) {
        this.release(client, rollbackErr);
      }
      throw toApiError(err);
    }
    this.release(client);
    await session.runAfterCommit();
    return result;
  }

  /** Gives a connection back; one that failed at the connection level is closed instead. */
  release(client: pg.PoolClient, err?: unknown): void {
    client.release(err !== undefined && isConnectionError(err));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.shared.close();
    await Promise.all([this.pool.end(), this.lanes.end()]);
  }
}

function runResult(result: pg.QueryResult): RunResult {
  return { changes: result.rowCount ?? 0, lastInsertRowid: 0 };
}

/** One Cairn database: a schema of the shared PostgreSQL database. */
export class PgDatabase implements Database {
  readonly dialect: Dialect = postgresDialect;

  constructor(
    private readonly server: PgServer,
    readonly name: string,
    readonly schema: string,
  ) {}

  private async withClient<T>(fn: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.server.connect(this.schema);
    try {
      const result = await fn(client);
      this.server.release(client);
      return result;
    } catch (err) {
      this.server.release(client, err);
      throw toApiError(err);
    }
  }

  all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    return this.withClient(async (c) => (await query(c, this.schema, sql, params)).rows as T[]);
  }

  allEach(queries: readonly Sql[]): Promise<Row[][]> {
    return this.withClient(async (c) => {
      // Pipelined: every statement is written before the first answer is read, in one write.
      const pending = inOneWrite(c, () => queries.map((q) => query(c, this.schema, q.text, q.params)));
      // Every answer is read before the connection goes back to the pool, even after a failure.
      const settled = await Promise.allSettled(pending);
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed) throw (failed as PromiseRejectedResult).reason;
      return settled.map((r) => (r as PromiseFulfilledResult<pg.QueryResult>).value.rows as Row[]);
    });
  }

  get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    return this.withClient(async (c) => (await query(c, this.schema, sql, params)).rows[0] as T | undefined);
  }

  lookup<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    const shared = this.server.shared.run(this.schema, sql, params);
    if (!shared) return this.get(sql, params);
    return shared.then(
      (result) => result.rows[0] as T | undefined,
      (err: unknown) => {
        throw toApiError(err);
      },
    );
  }

  run(sql: string, params?: readonly unknown[]): Promise<RunResult> {
    return this.withClient(async (c) => runResult(await query(c, this.schema, sql, params)));
  }

  async exec(sql: string): Promise<void> {
    await this.withClient((c) => c.query(toPostgres(sql, false)));
  }

  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.server.transactionAcross([this], ([tx]) => fn(tx));
  }

  /** The pool belongs to the process (PgServer), not to one database. */
  async close(): Promise<void> {}
}

/**
 * One PostgreSQL transaction on one connection. Every Cairn database is a schema of the same
 * PostgreSQL database, so one transaction can span several of them (a migration over two databases
 * commits atomically); each `PgTransaction` of the session sets the connection's search_path to its
 * schema before its statements when another schema's statements came last.
 */
class Session {
  finished = false;
  savepoints = 0;
  /** Savepoints open now: `last` inside one is an ordinary statement. */
  depth = 0;
  /** Whether a transaction is open on the connection: BEGIN goes out with the first statement. */
  begun = false;
  readonly callbacks: Array<() => void | Promise<void>> = [];
  private readonly state: ConnectionState;
  /** The search_path a rollback leaves (SET is transactional): the one before BEGIN, or after `last` committed. */
  private settled: string | undefined;

  constructor(
    readonly client: pg.PoolClient,
    readonly extensionSchema: string,
  ) {
    this.state = stateOf(client);
    this.settled = this.state.schema;
  }

  get schema(): string | undefined {
    return this.state.schema;
  }

  /**
   * Runs `send` (which writes one statement) inside the transaction. The first one is written right
   * behind BEGIN, in one write to the socket, and both answers are read in one wait: a transaction
   * of one statement costs two round trips (its statement, COMMIT) rather than three.
   */
  async run<R>(send: () => Promise<R>): Promise<R> {
    if (this.finished) throw new Error('transaction already finished');
    if (this.begun) return send();
    this.begun = true;
    const [begin, sent] = inOneWrite(this.client, () => [this.client.query('BEGIN'), send()] as const);
    // BEGIN fails only with its connection, which then fails the statement too: its error is the one reported.
    const [, result] = await Promise.all([begin.catch(() => undefined), sent]);
    return result;
  }

  /**
   * Runs `send` as the transaction's last statement (`Transaction.commitWith`): alone when nothing
   * began (autocommit: one statement is atomic), else with COMMIT behind it in one write. PostgreSQL
   * answers a COMMIT after a failed statement with a rollback, so a failure leaves nothing behind.
   */
  async last<R>(send: () => Promise<R>): Promise<R> {
    if (this.depth > 0) return this.run(send);
    if (this.finished) throw new Error('transaction already finished');
    this.finished = true;
    if (!this.begun) return send();
    const [sent, commit] = inOneWrite(this.client, () => [send(), this.client.query('COMMIT')] as const);
    const [statement, committed] = await Promise.allSettled([sent, commit]);
    this.begun = false;
    if (statement.status === 'rejected') throw statement.reason;
    if (committed.status === 'rejected') throw committed.reason;
    this.settled = this.state.schema;
    return statement.value;
  }

  /** Sets the search_path to `schema` unless it names it already (inside the transaction: SET is transactional). */
  async use(schema: string): Promise<void> {
    if (this.finished) throw new Error('transaction already finished');
    if (this.state.schema === schema) return;
    await this.run(() => this.client.query(searchPath(schema, this.extensionSchema)));
    this.state.schema = schema;
  }

  /** After a rollback the search_path is what it was at BEGIN (SET is transactional). */
  rolledBack(): void {
    this.state.schema = this.settled;
  }

  async runAfterCommit(): Promise<void> {
    for (const fn of this.callbacks) {
      try {
        const pending = fn();
        if (pending) await pending;
      } catch (err) {
        process.emitWarning(`after-commit callback failed: ${(err as Error).message}`);
      }
    }
  }
}

class PgTransaction implements Transaction {
  constructor(
    private readonly session: Session,
    private readonly schema: string,
    readonly dialect: Dialect,
  ) {}

  async all<T>(sql: string, params?: readonly unknown[]): Promise<T[]> {
    await this.session.use(this.schema);
    return (await this.session.run(() => query(this.session.client, this.schema, sql, params))).rows as T[];
  }

  async get<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    await this.session.use(this.schema);
    return (await this.session.run(() => query(this.session.client, this.schema, sql, params))).rows[0] as T | undefined;
  }

  async commitWith<T>(sql: string, params?: readonly unknown[]): Promise<T | undefined> {
    await this.session.use(this.schema);
    return (await this.session.last(() => query(this.session.client, this.schema, sql, params))).rows[0] as T | undefined;
  }

  async run(sql: string, params?: readonly unknown[]): Promise<RunResult> {
    await this.session.use(this.schema);
    return runResult(await this.session.run(() => query(this.session.client, this.schema, sql, params)));
  }

  async exec(sql: string): Promise<void> {
    await this.session.use(this.schema);
    await this.session.run(() => this.session.client.query(toPostgres(sql, false)));
  }

  async transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T> {
    if (this.session.finished) throw new Error('transaction already finished');
    const name = `sp${++this.session.savepoints}`;
    const pendingCallbacks = this.session.callbacks.length;
    await this.session.run(() => this.session.client.query(`SAVEPOINT ${name}`));
    this.session.depth++;
    try {
      const result = await fn(this);
      await this.session.client.query(`RELEASE SAVEPOINT ${name}`);
      return result;
    } catch (err) {
      await this.session.client.query(`ROLLBACK TO SAVEPOINT ${name}`);
      await this.session.client.query(`RELEASE SAVEPOINT ${name}`);
      // Follow-ups of work that was rolled back must not run.
      this.session.callbacks.length = pendingCallbacks;
      throw err;
    } finally {
      this.session.depth--;
    }
  }

  afterCommit(fn: () => void | Promise<void>): void {
    this.session.callbacks.push(fn);
  }

  async statement(sql: string, maxRows: number): Promise<StatementResult> {
    await this.session.use(this.schema);
    const r = await this.session.run(() => this.session.client.query({ text: toPostgres(sql, false), rowMode: 'array' }));
    return {
      columns: (r.fields ?? []).map((f) => ({ name: f.name, type: PG_TYPE_NAMES[f.dataTypeID] ?? '' })),
      rows: ((r.rows ?? []) as unknown[][]).slice(0, maxRows),
      changes: r.command === 'SELECT' ? 0 : (r.rowCount ?? 0),
    };
  }
}

/** Names of the built-in types a result column most often has (pg_type.typname by OID). */
const PG_TYPE_NAMES: Record<number, string> = {
  16: 'BOOL', 17: 'BYTEA', 20: 'INT8', 21: 'INT2', 23: 'INT4', 25: 'TEXT', 114: 'JSON', 700: 'FLOAT4', 701: 'FLOAT8',
  1043: 'VARCHAR', 1082: 'DATE', 1114: 'TIMESTAMP', 1184: 'TIMESTAMPTZ', 1700: 'NUMERIC', 2950: 'UUID', 3802: 'JSONB',
};
