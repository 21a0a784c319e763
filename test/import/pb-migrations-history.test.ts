import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { withDatabase } from '../helpers/inspect.ts';
import { migrationsDir, type RecordedRun, sqlMigrationRuntime } from '../helpers/pb-migrations.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { startServer } from '../helpers/server.ts';
import { PB_APPS, readPocketBase } from './pb-fixtures.ts';

test('an import keeps the pb_migrations PocketBase applied as applied: serving the app folder afterwards does not run them again', async () => {
  const source = path.join(PB_APPS, 'pb-legacy-todo.db');
  const pb = readPocketBase(source);
  const applied = (pb.prepare('SELECT file, applied FROM _migrations ORDER BY file').all() as Array<{ file: string; applied: number }>).filter((r) => r.file.endsWith('.js'));
  pb.close();
  assert.ok(applied.length > 0, 'the fixture has applied pb_migrations files');

  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-import-pbmig-'));
  // The app's folder: the files PocketBase applied, and one it has not seen yet.
  const folder = migrationsDir(Object.fromEntries([...applied.map((r) => [r.file, 'migrate((app) => { throw new Error("already applied on PocketBase") })']), ['1999999999_new.js', 'migrate((app) => {})']]));
  try {
    const res = await runCli(['import', 'pocketbase', source, '--dir', dir]);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`pb_migrations history carried: ${applied.length} applied files`));
    const rows = await withDatabase(dir, 'main', (db) => db.all<{ file: string; applied: unknown }>("SELECT file, applied FROM _migrations WHERE file LIKE '%.js' ORDER BY file"));
    assert.deepEqual(rows.map((r) => ({ file: r.file, applied: Number(r.applied) })), applied);

    const runs: RecordedRun[] = [];
    const server = await startServer({ dir, noAdmin: true, env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir }, pbMigrations: sqlMigrationRuntime(runs) });
    await server.close();
    assert.deepEqual(runs.map((r) => r.file), ['1999999999_new.js']);
  } finally {
    folder.remove();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  }
});
