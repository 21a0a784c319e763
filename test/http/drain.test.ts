import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { spawnServer } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

interface Outcome {
  status?: number;
  connection?: string;
  error?: string;
  sentAt: number;
}

function get(port: number, urlPath: string, agent: http.Agent | false): Promise<Outcome> {
  const sentAt = Date.now();
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: urlPath, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, connection: res.headers.connection, sentAt }));
      res.on('error', (err) => resolve({ error: err.message, sentAt }));
    });
    req.on('error', (err) => resolve({ error: (err as NodeJS.ErrnoException).code ?? err.message, sentAt }));
    req.end();
  });
}

/** True once nothing listens on the port any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('draining on SIGTERM (contract §21)', () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) {
      if (onPostgres) await dropDatabaseFor(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('requests on fresh and kept-alive connections around SIGTERM are all answered; health turns 503 at once', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-drain-'));
    dirs.push(dir);
    const server = await spawnServer(dir, { CAIRN_DRAIN_MS: '2000' });
    const agent = new http.Agent({ keepAlive: true, maxSockets: 6 });
    // Warm kept-alive connections up before the signal.
    await Promise.all(Array.from({ length: 6 }, () => get(server.port, '/api/health', agent)));
    const outcomes: Promise<Outcome>[] = [];
    let signalledAt = 0;
    let drainingSeenAt = 0;
    const start = Date.now();
    // Requests every couple of milliseconds, on both kinds of connection, from 100 ms before the signal
    // until 100 ms after health first answered 503 (well within the drain).
    while (!drainingSeenAt || Date.now() - drainingSeenAt < 100) {
      assert.ok(Date.now() - start < 1900, 'health answered 503 within the drain');
      if (!signalledAt && Date.now() - start >= 100) {
        signalledAt = Date.now();
        server.child.kill('SIGTERM');
      }
      const health = get(server.port, '/api/health', agent);
      void health.then((r) => {
        if (r.status === 503 && !drainingSeenAt) drainingSeenAt = Date.now();
      });
      outcomes.push(health, get(server.port, '/api/nothing-here', false), get(server.port, '/api/nothing-here', agent));
      await new Promise((r) => setTimeout(r, 2));
    }
    const results = await Promise.all(outcomes);
    agent.destroy();
    const failed = results.filter((r) => r.error !== undefined);
    assert.deepEqual(failed, [], `${failed.length} of ${results.length} requests failed`);
    assert.ok(results.some((r) => r.sentAt < signalledAt && r.status === 200));
    // Once the node is going, every answer closes its connection (kept-alive ones included).
    for (const r of results.filter((r) => r.status === 503)) assert.equal(r.connection, 'close');
    assert.ok(results.filter((r) => r.connection === 'close' && r.status === 404).length > 0);
    assert.equal(await server.exited, 0, server.output());
  });

  test('a request whose first bytes arrived before the listening socket closed is answered, not reset', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-drain-'));
    dirs.push(dir);
    const server = await spawnServer(dir, { CAIRN_DRAIN_MS: '300' });
    const socket = net.connect(server.port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answer = '';
    socket.on('data', (d) => (answer += d));
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => {});
    server.child.kill('SIGTERM');
    // Half a request line now, the rest once the node has stopped accepting.
    socket.write('GET /api/nothing-here HT');
    await waitFor(() => refused(server.port), { timeoutMs: 10_000, what: 'the listening socket to close' });
    socket.write('TP/1.1\r\nHost: x\r\n\r\n');
    await closed;
    assert.match(answer, /^HTTP\/1\.1 404/);
    assert.match(answer, /connection: close/i);
    assert.equal(await server.exited, 0, server.output());
  });

  test('a second SIGTERM ends the drain at once, and the node exits 0', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-drain-'));
    dirs.push(dir);
    const server = await spawnServer(dir, { CAIRN_DRAIN_MS: '60000', CAIRN_LOG_LEVEL: 'info' });
    server.child.kill('SIGTERM');
    await waitFor(async () => (await fetch(`${server.url}/api/health`)).status === 503, { what: 'health to answer 503' });
    const second = Date.now();
    server.child.kill('SIGTERM');
    assert.equal(await server.exited, 0, server.output());
    assert.ok(Date.now() - second < 15_000, 'the drain was skipped');
    assert.match(server.output(), /second signal: skipping the drain/);
  });
});
