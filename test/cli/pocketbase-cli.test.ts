import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Sqlite from 'better-sqlite3';
import { buildCli } from '../../src/cli/index.ts';
import { withDatabase } from '../helpers/inspect.ts';
import { migrationsDir, type RecordedRun, sqlMigrationRuntime } from '../helpers/pb-migrations.ts';
import { driverEnv, dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { CAIRN_ARGS, freePort, runCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

/** `cairn serve ARGS…` as PocketBase's scripts start it, until it answers /api/health on `port`. */
async function servePocketBaseStyle(dir: string, port: number, args: string[]): Promise<{ stop(): Promise<void>; output(): string }> {
  const child = spawn(process.execPath, [...CAIRN_ARGS, ...args], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'warn', CAIRN_RATE_LIMIT: 'off', CAIRN_DRAIN_MS: '0', CAIRN_HOOKS_DIR: 'off', CAIRN_PB_HOOKS_DIR: 'off', ...(await driverEnv(dir)) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  let gone = false;
  const exited = once(child, 'exit').then(() => (gone = true));
  await waitFor(
    async () => {
      if (gone) throw new Error(`cairn exited before it served:\n${out}`);
      return fetch(`http://127.0.0.1:${port}/api/health`).then((r) => r.ok, () => false);
    },
    { timeoutMs: 30_000, what: 'cairn serve' },
  );
  return {
    output: () => out,
    async stop() {
      if (!gone) child.kill('SIGTERM');
      await exited;
    },
  };
}

describe("PocketBase's `serve` flags", () => {
  let root: string;
  before(() => {
    root = mkdtempSync(path.join(tmpdir(), 'cairn-pbcli-'));
    mkdirSync(path.join(root, 'site'));
    writeFileSync(path.join(root, 'site', 'index.html'), '<title>pear</title>');
  });
  after(async () => {
    rmSync(root, { recursive: true, force: true });
    if (onPostgres) {
      await dropDatabaseFor(path.join(root, 'data'));
      await dropDatabaseFor(path.join(root, 'data2'));
    }
  });

  test('--http, --dir, --publicDir, --indexFallback=false, repeated --origins and flags Cairn ignores', async () => {
    const port = await freePort();
    const dir = path.join(root, 'data');
    const server = await servePocketBaseStyle(dir, port, [
      'serve',
      `--http=127.0.0.1:${port}`,
      `--dir=${dir}`,
      `--publicDir=${path.join(root, 'site')}`,
      '--indexFallback=false',
      '--origins=https://a.example',
      '--origins=https://b.example',
      `--migrationsDir=${path.join(root, 'no-migrations')}`,
      '--hooksWatch=false',
      '--encryptionEnv=PB_KEY',
      '--automigrate=0',
    ]);
    try {
      const base = `http://127.0.0.1:${port}`;
      assert.match(await (await fetch(`${base}/`)).text(), /pear/);
      assert.equal((await fetch(`${base}/deep/link`)).status, 404);
      const preflight = await fetch(`${base}/api/health`, { method: 'OPTIONS', headers: { origin: 'https://b.example', 'access-control-request-method': 'GET' } });
      assert.equal(preflight.headers.get('access-control-allow-origin'), 'https://b.example');
      assert.ok(readdirSync(dir).includes('system.db') || onPostgres);
    } finally {
      await server.stop();
    }
  });

  test('persistent flags before the command, as `pocketbase --dir=… serve`', async () => {
    const port = await freePort();
    const dir = path.join(root, 'data2');
    const server = await servePocketBaseStyle(dir, port, [`--dir=${dir}`, `--publicDir=${path.join(root, 'site')}`, 'serve', `--http=127.0.0.1:${port}`]);
    try {
      // The index fallback is on by default, as PocketBase's.
      assert.match(await (await fetch(`http://127.0.0.1:${port}/deep/link`)).text(), /pear/);
    } finally {
      await server.stop();
    }
  });

  test('what Cairn cannot do is refused with the reason: domains and --https (TLS), a malformed --http', async () => {
    for (const args of [['serve', 'example.com'], ['serve', '--https=0.0.0.0:443'], ['serve', '--http=8090'], ['serve', '--http=127.0.0.1:8090', '--port=9000']]) {
      const res = await runCli([...args, '--dir', path.join(root, 'refused')]);
      assert.notEqual(res.code, 0, args.join(' '));
      assert.match(res.stderr, /TLS|HOST:PORT|not both/, args.join(' '));
    }
  });

  test('a PocketBase data folder given as --dir: one line saying how to import it', async () => {
    const pbData = path.join(root, 'pb_data');
    mkdirSync(pbData);
    const db = new Sqlite(path.join(pbData, 'data.db'));
    db.exec('CREATE TABLE _collections (id TEXT PRIMARY KEY, name TEXT, type TEXT, fields JSON)');
    db.close();
    for (const args of [['serve', `--dir=${pbData}`], ['superuser', 'upsert', 'a@example.com', '1234567890', `--dir=${pbData}`], ['migrate', 'up', `--dir=${pbData}`]]) {
      const res = await runCli(args);
      assert.equal(res.code, 2, `${args[0]}: ${res.stderr}`);
      const lines = res.stderr.trim().split('\n');
      assert.equal(lines.length, 1, res.stderr);
      assert.match(lines[0], /is a PocketBase data folder: import it once with `cairn import pocketbase .*pb_data --dir .*cairn_data`/);
    }
    // Nothing was written into PocketBase's folder.
    assert.deepEqual(readdirSync(pbData), ['data.db']);
  });
});

describe("PocketBase's `superuser` command", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-superuser-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });
  const cli = (...args: string[]) => runCli([...args, '--dir', dir]);
  const admins = () => withDatabase(dir, 'system', (db) => db.all<{ email: string; passwordHash: string }>('SELECT email, passwordHash FROM _admins ORDER BY email'));

  test('create, upsert, update and delete, with PocketBase\'s messages', async () => {
    let res = await cli('superuser', 'create', 'ana@example.com', '1234567890');
    assert.equal(res.code, 0, res.stderr);
    assert.equal(res.stdout, 'Successfully created new superuser "ana@example.com"!\n');
    res = await cli('superuser', 'create', 'ana@example.com', '1234567890');
    assert.equal(res.code, 1);
    assert.match(res.stderr, /already exists/);

    const before = (await admins())[0].passwordHash;
    res = await cli('superuser', 'upsert', 'ana@example.com', 'another-password');
    assert.equal(res.stdout, 'Successfully saved superuser "ana@example.com"!\n');
    assert.notEqual((await admins())[0].passwordHash, before);
    res = await cli('superuser', 'upsert', 'ben@example.com', 'ben-password-1');
    assert.equal(res.code, 0, res.stderr);
    assert.deepEqual((await admins()).map((a) => a.email), ['ana@example.com', 'ben@example.com']);

    res = await cli('superuser', 'update', 'ben@example.com', 'ben-password-2');
    assert.equal(res.stdout, 'Successfully changed superuser "ben@example.com" password!\n');
    res = await cli('superuser', 'update', 'nobody@example.com', 'whatever-123');
    assert.equal(res.code, 2);
    assert.match(res.stderr, /doesn't exist/);

    res = await cli('superuser', 'delete', 'ben@example.com');
    assert.equal(res.stdout, 'Successfully deleted superuser "ben@example.com"!\n');
    res = await cli('superuser', 'delete', 'ben@example.com');
    assert.equal(res.code, 0);
    assert.equal(res.stdout, 'superuser "ben@example.com" is missing or already deleted\n');
    assert.deepEqual((await admins()).map((a) => a.email), ['ana@example.com']);

    res = await cli('superuser', 'create', 'not-an-email', '1234567890');
    assert.equal(res.code, 2);
    assert.match(res.stderr, /invalid email/);
    res = await cli('superuser', 'upsert', 'ana@example.com');
    assert.match(res.stderr, /missing email and password arguments/);
  });
});

describe('`cairn migrate` with pb_migrations beside YAML migrations', () => {
  let dir: string;
  let folder: ReturnType<typeof migrationsDir>;
  const runs: RecordedRun[] = [];
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-pbcli-migrate-'));
    folder = migrationsDir({
      '1700000001_created_plums.js': 'migrate((app) => { app.db().newQuery("CREATE TABLE plums (id TEXT)").execute() }, (app) => { app.db().newQuery("DROP TABLE plums").execute() })',
      '1700000002_seed_plums.js': 'migrate((db) => { new Dao(db).db().newQuery("INSERT INTO plums (id) VALUES (\'p1\')").execute() }, (db) => { db.newQuery("DELETE FROM plums").execute() })',
    });
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    folder.remove();
    if (onPostgres) await dropDatabaseFor(dir);
  });

  /** `cairn migrate ARGS…` in this process, with the test runtime for the files; answers its output lines. */
  async function migrate(...args: string[]): Promise<string[]> {
    const lines: string[] = [];
    const env = await driverEnv(dir);
    const where = ['--dir', dir, `--migrationsDir=${folder.dir}`, ...(env.CAIRN_DATABASE_URL ? ['--database-url', env.CAIRN_DATABASE_URL] : [])];
    await buildCli({ pbMigrations: sqlMigrationRuntime(runs), out: (line) => lines.push(line) }).parseAsync(['node', 'cairn', 'migrate', ...args, ...where]);
    return lines;
  }
  const plums = () => withDatabase(dir, 'main', async (db) => ((await db.dialect.tableExists(db, 'plums')) ? db.all('SELECT id FROM plums') : undefined));

  test('up applies the pb_migrations, then the YAML ones; down reverts the latest of either kind', async () => {
    assert.deepEqual(await migrate('up'), ['Applied 1700000001_created_plums.js', 'Applied 1700000002_seed_plums.js']);
    assert.deepEqual(await plums(), [{ id: 'p1' }]);
    assert.deepEqual(await migrate(), ['No new migrations to apply.']);

    // A YAML migration applied after them is the latest: `down` rolls it back first.
    mkdirSync(path.join(dir, 'migrations'), { recursive: true });
    writeFileSync(
      path.join(dir, 'migrations', '20240105_120000_000_notes.yaml'),
      'version: 20240105_120000_000\nname: notes\ndatabases:\n  main:\n    collections:\n      notes:\n        create_table:\n          name: notes\n          type: base\n          schema:\n            - {name: text, type: text}\n',
    );
    assert.deepEqual(await migrate('up'), ['Applied 20240105_120000_000.']);
    assert.deepEqual(await migrate('list'), ['20240105_120000_000  applied  notes', '1700000001_created_plums.js  applied  pb_migrations', '1700000002_seed_plums.js  applied  pb_migrations']);
    assert.deepEqual(await migrate('down'), ['Rolled back 20240105_120000_000.']);
    runs.length = 0;
    assert.deepEqual(await migrate('down', '5'), ['Reverted 1700000002_seed_plums.js', 'Reverted 1700000001_created_plums.js']);
    assert.deepEqual(runs.map((r) => `${r.direction} ${r.file}`), ['down 1700000002_seed_plums.js', 'down 1700000001_created_plums.js']);
    assert.equal(await plums(), undefined);
    assert.deepEqual(await migrate('down'), ['No migrations to revert.']);
    assert.deepEqual(await migrate('status'), ['applied: 0', 'pending: 1', 'failed: 0', 'last applied: none', 'pb_migrations (main): applied 0, pending 2']);
  });

  test('create and collections write PocketBase\'s files; history-sync forgets files that are gone', async () => {
    const [created] = await migrate('create', 'addPlumColors');
    const file = /Successfully created file "(.+)"/.exec(created)?.[1];
    assert.ok(file && /\/\d{10}_add_plum_colors\.js$/.test(file), created);
    assert.match(readFileSync(file, 'utf8'), /^\/\/\/ <reference path="\.\.\/pb_data\/types\.d\.ts" \/>\nmigrate\(\(app\) => \{\n {2}\/\/ add up queries\.\.\.\n\}, \(app\) => \{/);
    rmSync(file);

    await migrate('up');
    const [snap] = await migrate('collections');
    const snapshot = /Successfully created file "(.+)"/.exec(snap)?.[1];
    assert.ok(snapshot && snapshot.endsWith('_collections_snapshot.js'), snap);
    const text = readFileSync(snapshot, 'utf8');
    const json = JSON.parse(/const snapshot = (\[[\s\S]*\]);\n/.exec(text)![1]) as Array<Record<string, unknown>>;
    assert.ok(json.some((c) => c.name === 'users' && Array.isArray(c.fields)), 'users is in the snapshot');
    assert.ok(json.every((c) => !('created' in c) && !('updated' in c)));
    assert.match(text, /return app\.importCollections\(snapshot, false\);/);
    rmSync(snapshot);

    rmSync(path.join(folder.dir, '1700000002_seed_plums.js'));
    assert.deepEqual(await migrate('history-sync'), ['Forgot 1700000002_seed_plums.js', 'The _migrations table was synced with the available migrations.']);
    assert.deepEqual(
      await withDatabase(dir, 'main', (db) => db.all('SELECT file FROM _migrations')),
      [{ file: '1700000001_created_plums.js' }],
    );
  });
});
