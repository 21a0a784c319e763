import path from 'node:path';
import { migrationHost, type MigrationServices } from './host.ts';
import type { PbMigrationExecutor } from './types.ts';
import { MigrationWorker } from './worker.ts';

/**
 * Makes the JavaScript runtime that executes pb_migrations files for the services of a running (or
 * CLI) instance. The server and `cairn migrate` take it from here, tests may pass their own.
 */
export type PbMigrationRuntime = (services: MigrationServices) => PbMigrationExecutor;

/**
 * PocketBase's JavaScript API for pb_migrations files, on the pb_hooks runtime's modules (one
 * implementation of `$app`, `Collection`, the field constructors, `Dao`, `unmarshal`, …): each file
 * runs in a worker thread (worker-entry.ts) whose synchronous `$app` calls are answered here, in the
 * file's transaction (host.ts). A file that throws, or whose save is refused, rejects with an error
 * whose stack names the file's line.
 */
export const pbMigrationRuntime: PbMigrationRuntime = (services) => {
  const log = (level: string, msg: string, data: Record<string, unknown>) => {
    const l = services.log as unknown as Record<string, ((data: unknown, msg: string) => void) | undefined>;
    (l[level] ?? l.info)?.call(services.log, { ...data, pbMigrations: true }, msg);
  };
  const worker = new MigrationWorker(log);
  return async (run) => {
    const host = await migrationHost(services, { db: run.db, tx: run.tx });
    try {
      const outcome = await worker.run({ source: run.source, path: run.path, dir: path.dirname(run.path), direction: run.direction }, host.ops);
      await host.finish();
      return outcome;
    } finally {
      host.close();
    }
  };
};
