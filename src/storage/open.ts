import type { Config } from '../config.ts';
import type { StorageBackend } from './backend.ts';
import { PostgresBackend } from './postgres/backend.ts';
import { SqliteBackend } from './sqlite/backend.ts';

/** The storage a configuration names: PostgreSQL when CAIRN_DATABASE_URL is set, else SQLite files. */
export function openBackend(config: Pick<Config, 'dir' | 'databaseUrl' | 'pgPoolSize' | 'pgStatementTimeoutMs' | 'nodeId'>): StorageBackend {
  if (config.databaseUrl) {
    return new PostgresBackend({
      url: config.databaseUrl,
      poolSize: config.pgPoolSize,
      statementTimeoutMs: config.pgStatementTimeoutMs,
      connectTimeoutMs: 10_000,
      node: config.nodeId,
    });
  }
  return new SqliteBackend(config.dir);
}
