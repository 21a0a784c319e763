import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PbMigrationError } from '../../src/pbmigrations/errors.ts';
import { PbMigrationRunner } from '../../src/pbmigrations/runner.ts';
import { databaseOf, relationExists, columnsOf } from '../helpers/inspect.ts';
import { migrationsDir, type RecordedRun, sqlMigrationRuntime } from '../helpers/pb-migrations.ts';
import { databaseUrlFor, dropDatabaseFor, onPostgres, skipOn } from '../helpers/postgres.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

// ≥ 0.23's form.
const SHELVES = `/// <reference path="../pb_data/types.d.ts" />
migrate((app) => {
  app.db().newQuery("CREATE TABLE shelves (id TEXT PRIMARY KEY, title TEXT)").execute();
}, (app) => {
  app.db().newQuery("DROP TABLE shelves").execute();
});
`;

// v0.22's form: a Dao over the db handle.
const SEED = `migrate((db) => {
  const dao = new Dao(db);
  dao.db().newQuery("INSERT INTO shelves (id, title) VALUES ('s1', 'first')").execute();
}, (db) => {
  db.newQuery("DELETE FROM shelves WHERE id = 's1'").execute();
})
`;

const NOTE = `migrate((app) => {
  app.db().newQuery("ALTER TABLE shelves ADD COLUMN note TEXT").execute();
}, (app) => {
  app.db().newQuery("ALTER TABLE shelves DROP COLUMN note").execute();
});
`;

const FILES = {
  '1700000001_created_shelves.js': SHELVES,
  '1700000002_seed_shelves.js': SEED,
  '1700000003_updated_shelves.js': NOTE,
  // Not migrations: another extension, a file in a subfolder, and a file that registers nothing.
  'README.md': 'notes about the migrations',
  'lib/helpers.js': 'migrate((app) => { throw new Error("a subfolder is not read") })',
  '1700000000_comment_only.js': '// nothing registered here\n',
};

async function history(server: TestServer, db = 'main'): Promise<{ file: string; applied: number }[]> {
  const rows = await (await databaseOf(server, db)).all<{ file: string; applied: unknown }>('SELECT file, applied FROM _migrations ORDER BY file');
  return rows.map((r) => ({ file: r.file, applied: Number(r.applied) }));
}

describe('pb_migrations applied at start', () => {
  let folder: ReturnType<typeof migrationsDir>;
  let server: TestServer;
  const runs: RecordedRun[] = [];
  const startedAt = Date.now() * 1000;

  before(async () => {
    folder = migrationsDir(FILES);
    server = await startServer({ env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir }, pbMigrations: sqlMigrationRuntime(runs) });
  });
  after(async () => {
    await server?.close();
    folder?.remove();
  });

  test('each file runs once, in file-name order, and is recorded in the database\'s _migrations as PocketBase records it', async () => {
    assert.deepEqual(
      runs.map((r) => `${r.direction} ${r.file}`),
      ['up 1700000000_comment_only.js', 'up 1700000001_created_shelves.js', 'up 1700000002_seed_shelves.js', 'up 1700000003_updated_shelves.js'],
    );
    const main = await databaseOf(server);
    assert.deepEqual(await main.all('SELECT id, title, note FROM shelves'), [{ id: 's1', title: 'first', note: null }]);
    const rows = await history(server);
    // The file that registered nothing is not a migration; the others carry microseconds since the epoch.
    assert.deepEqual(rows.map((r) => r.file), ['1700000001_created_shelves.js', '1700000002_seed_shelves.js', '1700000003_updated_shelves.js']);
    for (const r of rows) assert.ok(r.applied >= startedAt && r.applied <= Date.now() * 1000, `${r.file}: ${r.applied}`);
    assert.ok(rows[0].applied < rows[1].applied && rows[1].applied < rows[2].applied);
  });

  test('Cairn\'s YAML registry (system.db\'s _migrations) is another table, left alone', async () => {
    const yaml = await server.admin('GET', '/api/migrations');
    assert.equal(yaml.status, 200);
    assert.deepEqual(yaml.body.items, []);
    assert.deepEqual(await columnsOf(server.services.registry.system, '_migrations').then((c) => c.includes('version')), true);
    assert.deepEqual(await columnsOf(await databaseOf(server), '_migrations'), ['file', 'applied']);
  });

  test('a database created while serving gets the folder\'s migrations', async () => {
    const made = await server.admin('POST', '/api/databases', { body: { name: 'branch' } });
    assert.equal(made.status, 200, made.text);
    assert.equal((await history(server, 'branch')).length, 3);
    assert.deepEqual(await (await databaseOf(server, 'branch')).all('SELECT id FROM shelves'), [{ id: 's1' }]);
  });

  test('down [N] runs the second functions of the last applied files, newest first; up applies them again', async () => {
    const execute = sqlMigrationRuntime(runs)(undefined as never);
    const runner = new PbMigrationRunner({ dir: folder.dir, registry: server.services.registry, collections: server.services.collections, execute });
    runs.length = 0;
    const reverted = await runner.down(2, ['main']);
    assert.deepEqual(reverted, [
      { db: 'main', file: '1700000003_updated_shelves.js' },
      { db: 'main', file: '1700000002_seed_shelves.js' },
    ]);
    const main = await databaseOf(server);
    assert.deepEqual(await columnsOf(main, 'shelves'), ['id', 'title']);
    assert.deepEqual(await main.all('SELECT id FROM shelves'), []);
    assert.deepEqual((await history(server)).map((r) => r.file), ['1700000001_created_shelves.js']);
    // The other database is left as it was.
    assert.equal((await history(server, 'branch')).length, 3);

    const again = await runner.up();
    assert.deepEqual(again, [
      { db: 'main', file: '1700000002_seed_shelves.js' },
      { db: 'main', file: '1700000003_updated_shelves.js' },
    ]);
    assert.deepEqual(await main.all('SELECT id, note FROM shelves'), [{ id: 's1', note: null }]);
  });

  test('history-sync drops the rows of files gone from the folder, in every database', async () => {
    const runner = new PbMigrationRunner({ dir: folder.dir, registry: server.services.registry, collections: server.services.collections, execute: sqlMigrationRuntime()(undefined as never) });
    unlinkSync(path.join(folder.dir, '1700000003_updated_shelves.js'));
    try {
      const dropped = await runner.historySync();
      assert.deepEqual(dropped, [
        { db: 'main', file: '1700000003_updated_shelves.js' },
        { db: 'branch', file: '1700000003_updated_shelves.js' },
      ]);
      assert.deepEqual((await history(server)).map((r) => r.file), ['1700000001_created_shelves.js', '1700000002_seed_shelves.js']);
      // Nothing was reverted: the column is still there.
      assert.ok((await columnsOf(await databaseOf(server), 'shelves')).includes('note'));
    } finally {
      folder.write('1700000003_updated_shelves.js', NOTE);
    }
  });
});

describe('pb_migrations on a restart and across nodes', () => {
  test('a restart applies only what is new; runners racing on one instance apply each file once', async () => {
    const folder = migrationsDir({ '1700000001_created_shelves.js': SHELVES });
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-pbmig-restart-'));
    const runs: RecordedRun[] = [];
    const start = () => startServer({ dir, env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir }, pbMigrations: sqlMigrationRuntime(runs) });
    try {
      await (await start()).close();
      folder.write('1700000002_seed_shelves.js', SEED);
      folder.write('1700000003_updated_shelves.js', NOTE);
      const server = await start();
      try {
        assert.deepEqual(runs.map((r) => r.file), ['1700000001_created_shelves.js', '1700000002_seed_shelves.js', '1700000003_updated_shelves.js']);
        folder.write('1700000004_more.js', 'migrate((app) => { app.db().newQuery("INSERT INTO shelves (id, title) VALUES (\'s2\', \'second\')").execute() })');
        const racers = [0, 1, 2].map(() => new PbMigrationRunner({ dir: folder.dir, registry: server.services.registry, collections: server.services.collections, execute: sqlMigrationRuntime(runs)(undefined as never) }));
        const results = await Promise.all(racers.map((r) => r.up()));
        assert.equal(results.flat().length, 1);
        assert.equal(runs.filter((r) => r.file === '1700000004_more.js').length, 1);
        assert.equal((await history(server)).length, 4);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseFor(dir);
      folder.remove();
    }
  });

  test('two nodes starting at once on one PostgreSQL database apply each file once', { skip: skipOn('sqlite', 'nodes share one PostgreSQL database') }, async () => {
    const folder = migrationsDir({ '1700000001_created_shelves.js': SHELVES, '1700000002_seed_shelves.js': SEED, '1700000003_updated_shelves.js': NOTE });
    const dirs = [0, 1].map(() => mkdtempSync(path.join(tmpdir(), 'cairn-pbmig-node-')));
    const url = await databaseUrlFor(dirs[0]);
    const runs: RecordedRun[] = [];
    const observer = new pg.Client({ connectionString: url });
    await observer.connect();
    // The first file waits until the other node is waiting for the lock: the starts overlap for sure.
    const base = sqlMigrationRuntime(runs);
    let held = false;
    const runtime: typeof base = (services) => {
      const execute = base(services);
      return async (run) => {
        if (!held) {
          held = true;
          await waitFor(async () => {
            const { rows } = await observer.query("SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())");
            return rows[0].n > 0;
          }, { timeoutMs: 60_000, what: 'the other node waiting for the pb_migrations lock' });
        }
        return execute(run);
      };
    };
    const nodes: TestServer[] = [];
    try {
      const started = await Promise.allSettled(dirs.map((dir, i) => startServer({ dir, noAdmin: true, env: { CAIRN_DATABASE_URL: url, CAIRN_NODE_ID: `node-${i}`, CAIRN_PB_MIGRATIONS_DIR: folder.dir }, pbMigrations: runtime })));
      for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
      // Every failed start is named: the one that fails first can be a node waiting for the other.
      const failed = started.filter((s): s is PromiseRejectedResult => s.status === 'rejected').map((s) => s.reason as unknown);
      if (failed.length > 0) throw new AggregateError(failed, failed.map(String).join('\n'));
      assert.deepEqual(runs.map((r) => r.file).sort(), ['1700000001_created_shelves.js', '1700000002_seed_shelves.js', '1700000003_updated_shelves.js']);
      assert.equal((await history(nodes[1])).length, 3);
      assert.deepEqual(await (await databaseOf(nodes[1])).all('SELECT id FROM shelves'), [{ id: 's1' }]);
    } finally {
      await observer.end();
      for (const n of nodes.reverse()) await n.close();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      await dropDatabaseFor(dirs[0]);
      folder.remove();
    }
  });
});

describe('a pb_migrations file that fails', () => {
  let folder: ReturnType<typeof migrationsDir>;
  before(() => {
    folder = migrationsDir({ '1700000001_created_shelves.js': SHELVES });
  });
  after(() => folder.remove());

  test('stops the start naming file and line; the files before it stay applied, nothing of it is kept', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-pbmig-fail-'));
    folder.write(
      '1700000002_broken.js',
      ['migrate((app) => {', '  app.db().newQuery("CREATE TABLE half (id TEXT)").execute();', '  throw new Error("collection authors not found");', '});', ''].join('\n'),
    );
    try {
      await assert.rejects(startServer({ dir, env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir }, pbMigrations: sqlMigrationRuntime() }), (err: unknown) => {
        assert.ok(err instanceof PbMigrationError, String(err));
        assert.equal(err.place.line, 3);
        assert.ok(err.message.startsWith(`${path.join(folder.dir, '1700000002_broken.js')}:3:`), err.message);
        assert.match(err.message, /collection authors not found/);
        return true;
      });
      // A statement that fails in the database undoes the statements of the same file before it.
      folder.write(
        '1700000002_broken.js',
        'migrate((app) => {\n  app.db().newQuery("CREATE TABLE half (id TEXT)").execute();\n  app.db().newQuery("INSERT INTO no_such_table (id) VALUES (1)").execute();\n});\n',
      );
      await assert.rejects(startServer({ dir, env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir }, pbMigrations: sqlMigrationRuntime() }), (err: unknown) => {
        assert.ok(err instanceof PbMigrationError);
        assert.match(err.message, /1700000002_broken\.js: .*no_such_table/);
        return true;
      });
      unlinkSync(path.join(folder.dir, '1700000002_broken.js'));
      const server = await startServer({ dir, env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir }, pbMigrations: sqlMigrationRuntime() });
      try {
        const main = await databaseOf(server);
        assert.equal(await relationExists(main, 'shelves'), true);
        assert.equal(await relationExists(main, 'half'), false);
        assert.deepEqual((await history(server)).map((r) => r.file), ['1700000001_created_shelves.js']);
        // A new database whose migrations fail is removed again.
        folder.write('1700000003_broken.js', 'migrate((app) => { throw new Error("no") })');
        const made = await server.admin('POST', '/api/databases', { body: { name: 'doomed' } });
        assert.equal(made.status, 500);
        const list = await server.admin('GET', '/api/databases');
        assert.ok(!list.body.some((d: { name: string }) => d.name === 'doomed'), JSON.stringify(list.body));
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseFor(dir);
    }
  });
});
