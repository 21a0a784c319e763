import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { freePort, spawnServer, type SpawnedServer } from '../helpers/process.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, request } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

// On PostgreSQL, where another node cannot tell a dead node from a slow one, the cut-off attempt is
// retried once its lease expires: a short lease (renewed while its node lives) keeps that wait short.
const LEASE_MS = 3_000;

const ENV = {
  CAIRN_ADMIN_EMAIL: ADMIN_EMAIL,
  CAIRN_ADMIN_PASSWORD: ADMIN_PASSWORD,
  CAIRN_WEBHOOK_BACKOFF_MS: '100',
  CAIRN_WEBHOOK_MAX_ATTEMPTS: '100',
  // Long enough that only the kill ends the attempt held by the hanging receiver.
  CAIRN_WEBHOOK_TIMEOUT_MS: '60000',
  ...(onPostgres ? { CAIRN_WEBHOOK_LEASE_MS: String(LEASE_MS) } : {}),
};

async function adminToken(url: string): Promise<string> {
  const res = await request(url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  assert.equal(res.status, 200, res.text);
  return res.body.token;
}

// One crash, two situations (spawning servers is the slow part): `orders` goes to a receiver that is
// down, so its event waits for a retry; `invoices` goes to a receiver holding the request, so its
// attempt is in flight when the process dies.
test('events survive SIGKILL and are delivered after restart: once, and again for a cut-off attempt', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-crash-'));
  const downPort = await freePort();
  const holding = await startReceiver();
  let down: Receiver | undefined;
  let server: SpawnedServer | undefined;
  try {
    holding.respond(() => 'hang');
    server = await spawnServer(dir, ENV);
    let token = await adminToken(server.url);
    for (const [name, url] of [
      ['orders', `http://127.0.0.1:${downPort}/orders`],
      ['invoices', `${holding.url}/invoices`],
    ]) {
      const created: { status: number; text: string } = await request(server.url, 'POST', '/api/collections', {
        token,
        body: { name, fields: [{ name: 'total', type: 'number' }], options: { triggers: [{ action: 'create', url, method: 'POST' }] } },
      });
      assert.equal(created.status, 200, created.text);
    }
    const order = await request(server.url, 'POST', '/api/collections/orders/records', { token, body: { total: 42 } });
    const invoice = await request(server.url, 'POST', '/api/collections/invoices/records', { token, body: { total: 7 } });
    assert.equal(order.status, 200, order.text);
    assert.equal(invoice.status, 200, invoice.text);
    await waitFor(async () => (await request(server!.url, 'GET', '/api/webhooks/logs?collection=orders&status=retrying', { token })).body.totalItems > 0, {
      what: 'a failed attempt to the receiver that is down',
    });
    await waitFor(() => holding.hanging === 1, { what: 'the attempt in flight' });

    assert.equal(await server.kill('SIGKILL'), null);
    down = await startReceiver(downPort);
    holding.respond(() => 200);
    server = await spawnServer(dir, ENV);
    token = await adminToken(server.url);

    const [delivered] = await down.waitForRequests(1, 15_000);
    assert.equal(delivered.json.record.id, order.body.id);
    assert.equal(delivered.json.record.total, 42);
    const resent = await holding.waitForRequests(2, 15_000 + (onPostgres ? LEASE_MS : 0));
    assert.equal(resent[1].json.id, resent[0].json.id);
    assert.equal(resent[1].json.record.id, invoice.body.id);

    // Once a success is recorded the event is finished and never claimed again.
    const successes = await waitFor(async () => {
      const res = await request(server!.url, 'GET', '/api/webhooks/logs?status=success', { token });
      return res.body.totalItems === 2 && res.body.items;
    });
    assert.deepEqual(successes.map((l: any) => l.eventId).sort(), [delivered.json.id, resent[0].json.id].sort());
    assert.equal(down.requests.length, 1);
    assert.equal(holding.requests.length, 2);
  } finally {
    await server?.kill('SIGKILL');
    await down?.close();
    await holding.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  }
});
