import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { acquireApplyLock } from '../../src/migrations/lock.ts';
import { runCli } from '../helpers/process.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';
import { readFile } from './helpers.ts';

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
  after(() => rmSync(dir, { recursive: true, force: true }));
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
    readFile(dir, 'main', (db) => assert.ok(db.prepare("SELECT 1 FROM _collections WHERE name = 'notes'").get()));

    // Read-only questions and a refused rollback can run side by side.
    const [status, generate, older] = await Promise.all([cli('status'), cli('generate', 'nothing'), cli('rollback', version!)]);
    assert.equal(status.stdout, 'applied: 2\npending: 0\nfailed: 0\nlast applied: 20240105_120000_000\n');
    assert.match(generate.stdout, /No schema changes/);
    assert.equal(older.code, 1, 'not the latest');
    assert.match(older.stderr, /roll back 20240105_120000_000 first/);

    res = await cli('down');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /Rolled back 20240105_120000_000/);
    readFile(dir, 'main', (db) => assert.equal(db.prepare("SELECT 1 FROM _collections WHERE name = 'notes'").get(), undefined));
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
        assert.match(res.stderr, new RegExp(`Another migration is being applied .*process ${process.pid}`));
      } finally {
        await release();
      }
      assert.equal((await server.admin('GET', '/api/migrations/status')).body.appliedCount, 0, 'nothing was applied meanwhile');
    });

    test('a lock left by a process that died is taken over', async () => {
      const child = spawn(process.execPath, ['-e', '']);
      const pid = child.pid!;
      await once(child, 'exit');
      await server.services.registry.system.run('INSERT INTO _migrations_lock (id, owner, pid, host, acquired) VALUES (1, ?, ?, ?, ?)', ['gone', pid, hostname(), '2024-01-01T00:00:00.000Z']);
      const res = await cli('up');
      assert.equal(res.code, 0, res.stderr);
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
    }
  });
});
