// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { DELIVERY } from '../../src/webhooks/attempt.ts';
import { Sender } from '../../src/webhooks/deliver.ts';

describe('webhook sender connections', () => {
  let server: http.Server;
  let url = '';
  let connections = 0;

  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    // Announced as `Keep-Alive: timeout=3`; undici keeps an idle socket for that less 2 s, so idle
    // sockets close after about a second.
    server.keepAliveTimeout = 3000;
    server.on('connection', () => connections++);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function burst(sender: Sender, requests: number): Promise<void> {
    let n = 0;
    await Promise.all(
      Array.from({ length: DELIVERY.maxPerOrigin }, async () => {
        while (n++ < requests) {
          const r = await sender.send({ url, method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
          assert.ok(r.ok, r.error);
        }
      }),
    );
  }

  // undici's Agent closed an origin's pool when its count of connections reached zero, but counted the
  // connect and disconnect events of pools it had already closed against the origin's next pool. After
  // a pause as long as the sockets' keep-alive, it sometimes (about one run in three of a standalone
  // script) fell into closing every pool it made: one connection per request from then on, about 13×
  // the CPU. Each burst here has maxPerOrigin requests in flight; its connections must be reused (a
  // pool may open a few more than the requests in flight while one is between requests).
  test('connections are reused, also after idle sockets timed out in a pause', async () => {
    const sender = new Sender(5000);
    try {
      for (const pause of [0, 990, 1000, 1010, 1025]) {
        await new Promise((resolve) => setTimeout(resolve, pause));
        const before = connections;
        await burst(sender, 1000);
        const opened = connections - before;
        assert.ok(opened <= 2 * DELIVERY.maxPerOrigin, `after a pause of ${pause} ms, 1,000 requests opened ${opened} connections`);
      }
    } finally {
      await sender.close();
    }
  });
  test('after close, a request fails without reaching the receiver; after interrupt, it reports interrupted', async () => {
    const closed = new Sender(5000);
    assert.ok((await closed.send({ url, method: 'POST', headers: {}, body: '{}' })).ok);
    await closed.close();
    const before = connections;
    const late = await closed.send({ url, method: 'POST', headers: {}, body: '{}' });
    assert.equal(late.ok, false);
    assert.equal(late.statusCode, 0);
    assert.equal(connections, before, 'no connection was opened');

    const interrupted = new Sender(5000);
    await interrupted.interrupt();
    const r = await interrupted.send({ url, method: 'POST', headers: {}, body: '{}' });
    assert.equal(r.interrupted, true);
  });
});
