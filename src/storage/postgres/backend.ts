import { quoteIdent } from '../../lib/identifiers.ts';
import { nowIso } from '../../lib/time.ts';
import { type StorageBackend, StorageStartError } from '../backend.ts';
import type { SchemaStep } from '../schema-steps.ts';
import type { Database } from '../types.ts';
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
    this.notifications = new PgNotifier(options.url);
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

  async open(name: string): Promise<Database | undefined> {
    const system = this.server.database('system', SYSTEM_SCHEMA);
    const found = await system.get('SELECT 1 AS found FROM pg_namespace WHERE nspname = ?', [name]);
    return found ? this.server.database(name, name) : undefined;
  }

  async create(name: string): Promise<Database> {
    const system = this.server.database('system', SYSTEM_SCHEMA);
    await system.exec(`CREATE SCHEMA IF NOT EXISTS ${quoteIdent(name)}`);
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
      await tx.get('SELECT pg_advisory_xact_lock(hashtext(?)) AS locked', [`cairn.schema.${schema}`]);
      await tx.exec('CREATE TABLE IF NOT EXISTS _cairn_schema (id TEXT PRIMARY KEY NOT NULL, applied TEXT NOT NULL)');
      const done = new Set((await tx.all<{ id: string }>('SELECT id FROM _cairn_schema')).map((r) => r.id));
      for (const step of steps) {
        if (done.has(step.id)) continue;
        await step.up(tx);
        await tx.run('INSERT INTO _cairn_schema (id, applied) VALUES (?, ?)', [step.id, nowIso()]);
      }
    });
  }

  async close(): Promise<void> {
    await this.notifications.close();
    await this.server.close();
  }
}
