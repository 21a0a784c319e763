import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { spawnServer } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, request } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const ENV = { CAIRN_ADMIN_EMAIL: ADMIN_EMAIL, CAIRN_ADMIN_PASSWORD: ADMIN_PASSWORD, CAIRN_LOG_LEVEL: 'info' };

/**
 * A create whose body never arrives in full: the server has taken the request up (it answered
 * "100 Continue") and waits for the rest. Resolves once it is in flight; `ended` resolves when the
 * server closes the connection or answers.
 */
async function heldCreate(port: number, token: string): Promise<{ ended: Promise<string> }> {
  const body = JSON.stringify({ text: 'never finished' });
  let inFlight = () => {};
  const routed = new Promise<void>((resolve) => (inFlight = resolve));
  const ended = new Promise<string>((resolve) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/collections/notes/records',
        headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: token, expect: '100-continue' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(`answered ${res.statusCode}`));
        res.on('error', () => resolve('cut off'));
      },
    );
    req.on('error', () => resolve('cut off'));
    req.on('continue', () => {
      req.write(body.slice(0, 5));
      inFlight();
    });
  });
  await routed;
  return { ended };
}

describe('shutdown of `cairn serve` with a request that never finishes', () => {
  let dir: string;
  let token: string;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-shutdown-'));
    const server = await spawnServer(dir, ENV);
    const login = await request(server.url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    token = login.body.token;
    const created = await request(server.url, 'POST', '/api/collections', { token, body: { name: 'notes', fields: [{ name: 'text', type: 'text' }] } });
    assert.equal(created.status, 200, created.text);
    assert.equal(await server.kill('SIGTERM'), 0);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  test('after CAIRN_SHUTDOWN_TIMEOUT_MS its connection is closed, and the process still exits 0', async () => {
    const server = await spawnServer(dir, { ...ENV, CAIRN_SHUTDOWN_TIMEOUT_MS: '300' });
    const held = await heldCreate(server.port, token);
    server.child.kill('SIGTERM');
    assert.equal(await held.ended, 'cut off');
    assert.equal(await server.exited, 0);
    const lines = server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    assert.ok(lines.some((l) => l.msg === 'shutting down' && l.timeoutMs === 300));
    const forced = lines.find((l) => /closing the connections still open after 300 ms/.test(l.msg));
    assert.ok(forced, server.output());
    assert.equal(forced.requests, 1);
  });

  test('a second signal exits at once, without waiting for the grace period', async () => {
    // A grace period the test would notice: the second signal must not wait for it.
    const server = await spawnServer(dir, { ...ENV, CAIRN_SHUTDOWN_TIMEOUT_MS: '600000' });
    await heldCreate(server.port, token);
    server.child.kill('SIGTERM');
    // The first signal is taken once it is logged; the second one then finds a shutdown under way.
    await waitFor(() => server.output().includes('"shutting down"'), { what: 'the first signal to be logged' });
    server.child.kill('SIGINT');
    assert.equal(await server.exited, 130);
    assert.match(server.output(), /second signal: exiting without finishing the shutdown/);
  });
});
