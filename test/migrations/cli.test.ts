import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { acquireApplyLock } from '../../src/migrations/lock.ts';
import { withDatabase } from '../helpers/inspect.ts';
import { databaseUrlFor, dropDatabaseFor, onPostgres, skipOn } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const NOTES = `version: 20240105_120000_000
name: notes
databases:
  main:
    collections:
      notes:
        create_table:
          name: notes
          type: base
          schema:
            - {name: text, type: text}
`;

describe('cairn migrate (CLI)', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-migrate-cli-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });
  const cli = (...args: string[]) => runCli(['migrate', ...args, '--dir', dir]);

  test('works on a data directory without a server', async () => {
    let res = await cli('generate', 'initial');
    assert.equal(res.code, 0, res.stderr);
    const version = /Created migration (\d{8}_\d{6}_\d{3})/.exec(res.stdout)?.[1];
    assert.ok(version, res.stdout);

    res = await cli('list');
    assert.match(res.stdout, new RegExp(`${version}\\s+pending\\s+initial`));
    res = await cli('up');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`Applied ${version}`));

    mkdirSync(path.join(dir, 'migrations'), { recursive: true });
    writeFileSync(path.join(dir, 'migrations', '20240105_120000_000_notes.yaml'), NOTES);
    res = await cli('apply', '20240105_120000_000');
    assert.equal(res.code, 0, res.stderr);
    assert.ok(await withDatabase(dir, 'main', (db) => db.get("SELECT 1 AS found FROM _collections WHERE name = 'notes'")));

    // Read-only questions and a refused rollback can run side by side.
    const [status, generate, older] = await Promise.all([cli('status'), cli('generate', 'nothing'), cli('rollback', version!)]);
    assert.equal(status.stdout, 'applied: 2\npending: 0\nfailed: 0\nlast applied: 20240105_120000_000\n');
    assert.match(generate.stdout, /No schema changes/);
    assert.equal(older.code, 1, 'not the latest');
    assert.match(older.stderr, /roll back 20240105_120000_000 first/);

    res = await cli('down');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /Rolled back 20240105_120000_000/);
    assert.equal(await withDatabase(dir, 'main', (db) => db.get("SELECT 1 AS found FROM _collections WHERE name = 'notes'")), undefined);
    res = await cli('rollback', version!);
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, new RegExp(`Rolled back ${version}`));
  });

  describe('beside a running server', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ dir });
    });
    after(() => server.close());

    test('an apply from the CLI while the server applies is refused', async () => {
      const release = await acquireApplyLock(server.services.registry);
      try {
        const res = await cli('up');
        assert.equal(res.code, 1);
        // SQLite's lock row names its holder; PostgreSQL's advisory lock has no more to say than that it is held.
        assert.match(res.stderr, onPostgres ? /Another migration is being applied or rolled back; try again/ : new RegExp(`Another migration is being applied .*process ${process.pid}`));
      } finally {
        await release();
      }
      assert.equal((await server.admin('GET', '/api/migrations/status')).body.appliedCount, 0, 'nothing was applied meanwhile');
    });

    test('a lock left by a process that died is taken over', { skip: skipOn('postgres', "SQLite's lock row") }, async () => {
      const child = spawn(process.execPath, ['-e', '']);
      const pid = child.pid!;
      await once(child, 'exit');
      await server.services.registry.system.run('INSERT INTO _migrations_lock (id, owner, pid, host, acquired) VALUES (1, ?, ?, ?, ?)', ['gone', pid, hostname(), '2024-01-01T00:00:00.000Z']);
      const res = await cli('up');
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /Applied/);
      assert.equal((await server.admin('GET', '/api/migrations/status')).body.pendingCount, 0);
    });

    test('the lock of a process that died goes with its session', { skip: skipOn('sqlite', "PostgreSQL's advisory lock") }, async () => {
      assert.ok((await server.admin('GET', '/api/migrations/status')).body.pendingCount > 0, 'something to apply');
      // A process that takes the apply lock the way a node does, and is then killed mid-apply.
      const holder = spawn(
        process.execPath,
        [
          '-e',
          `const c = new (require('pg').Client)(process.argv[1]);
           c.connect().then(() => c.query("SELECT pg_advisory_lock(hashtext('cairn.migrations.apply'))")).then(() => console.log('locked'));`,
          await databaseUrlFor(dir),
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      try {
        let out = '';
        holder.stdout!.on('data', (d) => (out += d));
        await waitFor(() => out.includes('locked'), { what: 'the other process to hold the lock' });
        const refused = await cli('up');
        assert.equal(refused.code, 1, 'refused while the other process lives');
        assert.match(refused.stderr, /Another migration is being applied or rolled back/);
      } finally {
        holder.kill('SIGKILL');
        await once(holder, 'exit');
      }
      // PostgreSQL ends the session of a connection whose process is gone, and the lock with it:
      // nothing is left behind to take over.
      const res = await waitFor(async () => {
        const r = await cli('up');
        return r.code === 0 && r;
      }, { what: 'the lock to go with the killed process' });
      assert.match(res.stdout, /Applied/);
      assert.equal((await server.admin('GET', '/api/migrations/status')).body.pendingCount, 0);
    });
  });
  test('a running server picks up what the CLI applies beside it (collections and new databases)', async () => {
    const live = mkdtempSync(path.join(tmpdir(), 'cairn-migrate-live-'));
    const server = await startServer({ dir: live });
    try {
      mkdirSync(path.join(live, 'migrations'), { recursive: true });
      const text = NOTES.replace('20240105_120000_000', '20240106_120000_000').replace('  main:', '  side:');
      writeFileSync(path.join(live, 'migrations', '20240106_120000_000_notes.yaml'), text);
      assert.equal((await server.admin('GET', '/api/collections/notes', { db: 'side' })).status, 404);

      const res = await runCli(['migrate', 'apply', '20240106_120000_000', '--dir', live]);
      assert.equal(res.code, 0, res.stderr);
      await waitFor(async () => (await server.admin('GET', '/api/collections/notes', { db: 'side' })).status === 200, {
        what: 'the server to see the database and collection the CLI created',
      });
      const created = await server.admin('POST', '/api/collections/notes/records', { db: 'side', body: { text: 'hello' } });
      assert.equal(created.status, 200, created.text);

      assert.equal((await runCli(['migrate', 'rollback', '20240106_120000_000', '--dir', live])).code, 0);
      await waitFor(async () => (await server.admin('GET', '/api/collections/notes', { db: 'side' })).status === 404, {
        what: 'the server to see the rollback',
      });
    } finally {
      await server.close();
      rmSync(live, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseFor(live);
    }
  });
});
