import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import type { PbMigrationRuntime } from '../../src/pbmigrations/runtime.ts';
import type { PbMigrationRun } from '../../src/pbmigrations/types.ts';

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
