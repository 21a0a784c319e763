import type { Config } from '../config.ts';
import type { StorageBackend } from './backend.ts';
import { SqliteBackend } from './sqlite/backend.ts';

/**
 * The storage a configuration names: PostgreSQL when CAIRN_DATABASE_URL is set, else SQLite files.
 * The PostgreSQL driver (`pg`, some 10 MB resident) is imported only when it is the one named.
 */
export async function openBackend(config: Pick<Config, 'dir' | 'databaseUrl' | 'pgPoolSize' | 'pgPoolMin' | 'pgPoolWaitMs' | 'pgPoolQueue' | 'pgStatementTimeoutMs' | 'nodeId'>): Promise<StorageBackend> {
  if (config.databaseUrl) {
    const { PostgresBackend } = await import('./postgres/backend.ts');
    return new PostgresBackend({
      url: config.databaseUrl,
      poolSize: config.pgPoolSize,
      minConnections: config.pgPoolMin,
      statementTimeoutMs: config.pgStatementTimeoutMs,
      connectTimeoutMs: config.pgPoolWaitMs,
      queueLimit: config.pgPoolQueue,
      node: config.nodeId,
    });
  }
  return new SqliteBackend(config.dir);
}
