import { hostname } from 'node:os';
import { quoteIdent } from '../../lib/identifiers.ts';
import { nowIso } from '../../lib/time.ts';
import { type StorageBackend, StorageStartError } from '../backend.ts';
import type { SchemaStep } from '../schema-steps.ts';
import type { Database, Queryable, Transaction } from '../types.ts';
import { postgresDialect } from './dialect.ts';
import { PgNotifier } from './notifier.ts';
import { type PgDatabase, type PgOptions, PgServer, SYSTEM_SCHEMA } from './driver.ts';

/** The URL without its password, for messages. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'the configured PostgreSQL URL';
  }
}

/** Databases as schemas of one PostgreSQL database; the instance's own tables in `cairn_system`. */
export class PostgresBackend implements StorageBackend {
  readonly dialect = postgresDialect;
  readonly shared = true;
  readonly server: PgServer;
  readonly notifications: PgNotifier;

  constructor(options: PgOptions) {
    this.server = new PgServer(options);
    this.notifications = new PgNotifier(options.url, options.node ?? `${hostname()}:${process.pid}`);
  }

  get location(): string {
    return redactUrl(this.server.options.url);
  }

  async openSystem(): Promise<Database> {
    try {
      await this.server.start();
    } catch (err) {
      await this.server.close().catch(() => {});
      const reason = (err as Error).message || String((err as { code?: string }).code ?? err);
      throw new StorageStartError(`cannot use PostgreSQL at ${this.location}: ${reason}`);
    }
    return this.server.database('system', SYSTEM_SCHEMA);
  }

  /** The request log's table lives beside the instance tables, in `cairn_system`. */
  async openLogs(): Promise<Database> {
    return this.server.database('logs', SYSTEM_SCHEMA);
  }

  async open(name: string): Promise<Database | undefined> {
    const system = this.server.database('system', SYSTEM_SCHEMA);
    const found = await system.get('SELECT 1 AS found FROM pg_namespace WHERE nspname = ?', [name]);
    return found ? this.server.database(name, name) : undefined;
  }

  /** A database's handle is a schema name on the shared pool: asking through it opens nothing. */
  async peek<T>(name: string, fn: (q: Queryable) => Promise<T>): Promise<T | undefined> {
    const db = await this.open(name);
    return db ? fn(db) : undefined;
  }

  async create(name: string): Promise<Database> {
    const system = this.server.database('system', SYSTEM_SCHEMA);
    // Under the schema's lock: PostgreSQL's `IF NOT EXISTS` does not hold against a concurrent
    // creation, so two nodes starting at once on a new database failed one start with a unique
    // violation on pg_namespace.
    await system.transaction(async (tx) => {
      await this.lockInTransaction(tx, `cairn.schema.${name}`);
      await tx.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(name)}`);
    });
    return this.server.database(name, name);
  }

  async remove(name: string): Promise<void> {
    const system = this.server.database('system', SYSTEM_SCHEMA);
    await system.exec(`DROP SCHEMA IF EXISTS ${quoteIdent(name)} CASCADE`);
  }

  /**
   * All pending steps in one transaction (PostgreSQL's DDL is transactional), under a lock per schema:
   * nodes starting together do not both run a step.
   */
  async applySteps(db: Database, steps: readonly SchemaStep[]): Promise<void> {
    const schema = (db as PgDatabase).schema;
    await db.transaction(async (tx) => {
      await this.lockInTransaction(tx, `cairn.schema.${schema}`);
      await tx.exec('CREATE TABLE IF NOT EXISTS _cairn_schema (id TEXT PRIMARY KEY NOT NULL, applied TEXT NOT NULL)');
      const done = new Set((await tx.all<{ id: string }>('SELECT id FROM _cairn_schema')).map((r) => r.id));
      for (const step of steps) {
        if (done.has(step.id)) continue;
        await step.up(tx);
        await tx.run('INSERT INTO _cairn_schema (id, applied) VALUES (?, ?)', [step.id, nowIso()]);
      }
    });
  }

  async lockInTransaction(tx: Transaction, key: string): Promise<void> {
    await tx.get('SELECT pg_advisory_xact_lock(hashtext(?)) AS locked', [key]);
  }

  transactionAcross<T>(dbs: readonly Database[], fn: (txs: Transaction[]) => Promise<T>): Promise<T> {
    return this.server.transactionAcross(dbs as PgDatabase[], fn);
  }

  /** A session advisory lock on a connection kept out of the pool while held: a node that dies loses
   * its connection, and with it the lock. */
  async tryLock(key: string): Promise<(() => Promise<void>) | undefined> {
    const client = await this.server.connect(SYSTEM_SCHEMA);
    let got = false;
    try {
      got = (await client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS ok', [key])).rows[0].ok;
    } catch (err) {
      this.server.release(client, err);
      throw err;
    }
    if (!got) {
      this.server.release(client);
      return undefined;
    }
    return async () => {
      try {
        await client.query('SELECT pg_advisory_unlock(hashtext($1))', [key]);
        this.server.release(client);
      } catch (err) {
        this.server.release(client, err);
      }
    };
  }

  async close(): Promise<void> {
    await this.notifications.close();
    await this.server.close();
  }
}
