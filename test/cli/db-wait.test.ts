import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';
import { CAIRN_ARGS, freePort, runCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

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
    // The node starts while nothing listens there; the proxy (the database, as far as the node can
    // tell) opens once the node has said that it waits.
    const serverPort = await freePort();
    const child = spawn(process.execPath, [...CAIRN_ARGS, 'serve', '--dir', dir, '--port', String(serverPort), '--host', '127.0.0.1'], {
      env: { ...process.env, CAIRN_DATABASE_URL: late.toString(), CAIRN_DB_WAIT_MS: '20000', CAIRN_LOG_LEVEL: 'info', CAIRN_RATE_LIMIT: 'off', CAIRN_DRAIN_MS: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    const exited = once(child, 'exit');
    let proxy: net.Server | undefined;
    try {
      await waitFor(() => out.includes('the database is not up yet; waiting for it'), { timeoutMs: 20_000, what: 'the node to say it waits' });
      proxy = await openProxy(port, real);
      await waitFor(
        async () => {
          try {
            return (await fetch(`http://127.0.0.1:${serverPort}/api/health`)).status === 200;
          } catch {
            return false;
          }
        },
        { timeoutMs: 20_000, what: 'the node to serve once its database answers' },
      );
      assert.match(out, /the database answers/);
    } finally {
      child.kill('SIGTERM');
      const [code] = await exited;
      proxy?.close();
      assert.equal(code, 0, out);
    }
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
