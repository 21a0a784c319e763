import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { databaseOf } from '../helpers/inspect.ts';
import { migrationsDir } from '../helpers/pb-migrations.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * PocketBase's automigrate: collections created, changed and deleted through the API (the console)
 * are written to the app's pb_migrations folder, recorded as applied where they were made; another
 * instance started on the folder gets the same collections, and `migrate down` reverts them.
 */
describe('automigrate', () => {
  let folder: ReturnType<typeof migrationsDir>;
  let server: TestServer;
  const dirs: string[] = [];
  const shape = (c: { fields: Array<{ name: string; type: string }>; listRule: unknown; viewRule: unknown }) => ({
    fields: c.fields.filter((f) => !['id', 'created', 'updated'].includes(f.name)).map((f) => `${f.name}:${f.type}`),
    listRule: c.listRule,
    viewRule: c.viewRule,
  });

  before(async () => {
    folder = migrationsDir({});
    // The folder exists: automigrate is on without being asked for.
    server = await startServer({ env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir } });
  });
  after(async () => {
    await server?.close();
    folder?.remove();
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseFor(dir);
    }
  });

  test('is on where the pb_migrations folder exists, or when asked for', () => {
    const missing = path.join(folder.root, 'nowhere');
    assert.equal(loadConfig({ pbMigrations: folder.dir }, {}).pbAutomigrate, true);
    assert.equal(loadConfig({ pbMigrations: missing }, {}).pbAutomigrate, false);
    assert.equal(loadConfig({ pbMigrations: missing, automigrate: true }, {}).pbAutomigrate, true);
    assert.equal(loadConfig({ pbMigrations: folder.dir }, { CAIRN_PB_AUTOMIGRATE: 'off' }).pbAutomigrate, false);
    assert.equal(loadConfig({ pbMigrations: 'off', automigrate: true }, {}).pbAutomigrate, false, 'no folder to write to');
    assert.throws(() => loadConfig({ pbMigrations: folder.dir }, { CAIRN_PB_AUTOMIGRATE: 'sometimes' }), /CAIRN_PB_AUTOMIGRATE must be "on" or "off"/);
  });

  test('each change through the API is a file, in the order made, applied where it was made', async () => {
    const created = await server.admin('POST', '/api/collections', { body: { name: 'notes', type: 'base', fields: [{ name: 'title', type: 'text' }], listRule: '' } });
    assert.equal(created.status, 200, created.text);
    const changed = await server.admin('PATCH', '/api/collections/notes', { body: { fields: [...created.body.fields, { name: 'body', type: 'text' }], viewRule: '' } });
    assert.equal(changed.status, 200, changed.text);
    // A save that changes nothing writes nothing.
    assert.equal((await server.admin('PATCH', '/api/collections/notes', { body: {} })).status, 200);
    // The rules resource (API contract §6) is a change too.
    const rules = await server.admin('PUT', '/api/collections/notes/rules', { body: { list: '', view: '', create: '@request.auth.id != ""', update: null, delete: null } });
    assert.equal(rules.status, 200, rules.text);
    assert.equal((await server.admin('POST', '/api/collections', { body: { name: 'scratch', type: 'base', fields: [{ name: 'n', type: 'number' }] } })).status, 200);
    assert.equal((await server.admin('DELETE', '/api/collections/scratch')).status, 204);

    const files = readdirSync(folder.dir).sort();
    assert.deepEqual(files.map((f) => f.replace(/^\d+_/, '')), ['created_notes.js', 'updated_notes.js', 'updated_notes.js', 'created_scratch.js', 'deleted_scratch.js']);
    const rows = await (await databaseOf(server)).all<{ file: string }>('SELECT file FROM _migrations ORDER BY file');
    assert.deepEqual(rows.map((r) => r.file), files);
    const update = readFileSync(path.join(folder.dir, files[1]), 'utf8');
    assert.match(update, /^\/\/\/ <reference path="\.\.\/pb_data\/types\.d\.ts" \/>\nmigrate\(\(app\) => \{/);
    assert.match(update, new RegExp(`app\\.findCollectionByNameOrId\\("${created.body.id}"\\)`));
    assert.match(update, /unmarshal\(\{/);
    assert.doesNotMatch(update, /"listRule"/, 'only what changed');
  });

  test('another instance started on the folder gets the same collections; migrate down reverts them', async () => {
    const notes = (await server.admin('GET', '/api/collections/notes')).body;
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-automigrate-'));
    dirs.push(dir);
    const other = await startServer({ dir, env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir } });
    try {
      const copy = await other.admin('GET', '/api/collections/notes');
      assert.equal(copy.status, 200, copy.text);
      assert.equal(copy.body.id, notes.id);
      assert.deepEqual(shape(copy.body), shape(notes));
      assert.equal((await other.admin('GET', '/api/collections/scratch')).status, 404);
    } finally {
      await other.close();
    }
    // Reverting the last four (the delete, the create, the rules, the update) leaves notes as it was made.
    const down = await runCli(['migrate', 'down', '4', '--dir', dir, '--migrationsDir', folder.dir]);
    assert.equal(down.code, 0, down.stderr);
    // Without the folder: a start would apply the four files again.
    const again = await startServer({ dir });
    try {
      const reverted = await again.admin('GET', '/api/collections/notes');
      assert.equal(reverted.status, 200, reverted.text);
      assert.deepEqual(shape(reverted.body), { fields: ['title:text'], listRule: '', viewRule: null });
      assert.equal((await again.admin('GET', '/api/collections/scratch')).status, 404);
    } finally {
      await again.close();
    }
  });
});
