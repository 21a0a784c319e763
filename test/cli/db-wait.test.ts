import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';
import { freePort, runCli, spawnServer } from '../helpers/process.ts';

/** A TCP proxy on `port` in front of `target`, opened only when called. */
async function openProxy(port: number, target: URL): Promise<net.Server> {
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    client.pipe(upstream).pipe(client);
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return server;
}

describe('waiting for the database at start (contract §21)', { skip: skipOn('sqlite', 'PostgreSQL only') }, () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) {
      await dropDatabaseFor(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('a node whose database refuses connections waits for it, then serves', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-dbwait-'));
    dirs.push(dir);
    const real = new URL(await databaseUrlFor(dir));
    const port = await freePort();
    const late = new URL(real);
    late.hostname = '127.0.0.1';
    late.port = String(port);
    // The proxy (the database, as far as the node can tell) opens a second and a half after the start.
    let proxy: net.Server | undefined;
    const opening = new Promise<void>((resolve) =>
      setTimeout(async () => {
        proxy = await openProxy(port, real);
        resolve();
      }, 1500),
    );
    const server = await spawnServer(dir, { CAIRN_DATABASE_URL: late.toString(), CAIRN_DB_WAIT_MS: '20000', CAIRN_LOG_LEVEL: 'info' });
    await opening;
    assert.match(server.output(), /the database is not up yet; waiting for it/);
    assert.equal((await fetch(`${server.url}/api/health`)).status, 200);
    assert.equal(await server.kill(), 0);
    proxy?.close();
  });

  test('past CAIRN_DB_WAIT_MS it gives up with exit code 1', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-dbwait-'));
    const port = await freePort();
    const started = Date.now();
    const result = await runCli(['serve', '--dir', dir, '--port', String(await freePort())], {
      CAIRN_DATABASE_URL: `postgres://cairn@127.0.0.1:${port}/nothing`,
      CAIRN_DB_WAIT_MS: '800',
      CAIRN_LOG_LEVEL: 'info',
    });
    rmSync(dir, { recursive: true, force: true });
    assert.equal(result.code, 1, result.stdout + result.stderr);
    assert.ok(Date.now() - started >= 800);
    assert.match(result.stdout + result.stderr, /waiting for it/);
  });
});
