import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before } from 'node:test';
import vm from 'node:vm';
import type { HookServices } from '../../src/hooks/facade.ts';
import { migrationHost, type MigrationHost } from '../../src/pbmigrations/host.ts';
import type { PbMigrationRuntime } from '../../src/pbmigrations/runtime.ts';
import type { PbMigrationRun } from '../../src/pbmigrations/types.ts';
import type { Database } from '../../src/storage/index.ts';
import { databaseOf } from './inspect.ts';
import { startServer, type TestServer } from './server.ts';

/**
 * A stand-in for the pb_hooks runtime in the pb_migrations runner's tests: it evaluates a file as
 * PocketBase does (its own context, `migrate(up, down)`, the file's path in stack traces) and gives
 * the chosen function the one API these tests' files use, raw SQL, in both generations' spellings:
 * ≥ 0.23 `app.db().newQuery(sql).execute()`, v0.22 `db.newQuery(sql).execute()` (and
 * `new Dao(db).db().newQuery(…)`). Calls are synchronous in the file, so the statements are
 * collected and run in the file's transaction, in order, once its function has returned.
 */
export interface RecordedRun {
  file: string;
  db: string;
  direction: 'up' | 'down';
}

export function sqlMigrationRuntime(runs: RecordedRun[] = []): PbMigrationRuntime {
  return () => async (run: PbMigrationRun) => {
    runs.push({ file: run.file, db: run.db, direction: run.direction });
    const statements: string[] = [];
    const query = (text: string) => ({ execute: () => void statements.push(text) });
    const db = { newQuery: query };
    const app = { db: () => db };
    let registered: [((arg: unknown) => unknown) | undefined, ((arg: unknown) => unknown) | undefined] | undefined;
    const context = vm.createContext({
      migrate: (up?: (arg: unknown) => unknown, down?: (arg: unknown) => unknown) => {
        registered ??= [up, down];
      },
      Dao: function Dao(this: unknown) {
        return { db: () => db };
      },
    });
    new vm.Script(run.source, { filename: run.path }).runInContext(context);
    if (!registered) return { registered: false };
    const fn = run.direction === 'up' ? registered[0] : registered[1];
    // v0.22's functions take `db`, ≥ 0.23's `app`: both answer newQuery here.
    fn?.(Object.assign({}, db, app));
    for (const text of statements) await run.tx.exec(text);
    return { registered: true };
  };
}

/** A temporary app folder with `pb_migrations/` holding `files`. */
export function migrationsDir(files: Record<string, string>): { root: string; dir: string; write(name: string, text: string): void; remove(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'cairn-pbmig-'));
  const dir = path.join(root, 'pb_migrations');
  mkdirSync(dir);
  const write = (name: string, text: string) => {
    mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    writeFileSync(path.join(dir, name), text);
  };
  for (const [name, text] of Object.entries(files)) write(name, text);
  return { root, dir, write, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * A test server whose `main` a test file's tests change as pb_migrations files would: `inMigration`
 * runs its function with a migration host in a transaction of `main`, committed at the end. The
 * server is started before the file's tests and closed after them (node:test hooks registered here);
 * `started` hands the file the server and its `main` database.
 */
export function migrationServer(started: (server: TestServer, db: Database) => void): { inMigration<T>(fn: (host: MigrationHost) => Promise<T>): Promise<T> } {
  let server: TestServer | undefined;
  let db: Database;
  before(async () => {
    server = await startServer();
    db = await databaseOf(server);
    started(server, db);
  });
  after(async () => {
    await server?.close();
  });
  return {
    async inMigration<T>(fn: (host: MigrationHost) => Promise<T>): Promise<T> {
      let out!: T;
      try {
        await db.transaction(async (tx) => {
          const host = await migrationHost(server!.services as unknown as HookServices, { db: 'main', tx });
          try {
            out = await fn(host);
            await host.finish();
          } finally {
            host.close();
          }
        });
      } finally {
        await server!.services.collections.invalidate(db);
      }
      return out;
    },
  };
}

/** One of the host's operations, as a file's call of `app.<op>(…)` reaches it. */
export const callOp = (host: MigrationHost, op: string, ...args: unknown[]) => host.ops(op, args) as Promise<any>;
