import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Security invariant "outbound requests refuse link-local and cloud metadata addresses" (API contract
 * §20, issue 36): an administrator's webhook trigger to the metadata address is not delivered; the
 * attempt is logged as failed saying why. Loopback stays allowed (the control receiver below). The
 * check after DNS resolution is src/lib/outbound.test.ts (the sandbox has no DNS to point a name at
 * 169.254.x).
 */
describe('webhook deliveries refuse link-local and metadata addresses', () => {
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    server = await startServer({ env: { CAIRN_WEBHOOK_BACKOFF_MS: '20', CAIRN_WEBHOOK_MAX_ATTEMPTS: '2', CAIRN_WEBHOOK_TIMEOUT_MS: '1000' } });
    receiver = await startReceiver();
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  const targets = ['http://169.254.169.254/latest/meta-data/iam/security-credentials/', 'http://metadata.google.internal/computeMetadata/v1/', 'http://[fe80::1]/x', 'http://[::ffff:169.254.169.254]/', 'http://2852039166/'];

  test('triggers to those addresses fail every attempt without connecting; loopback is delivered', async () => {
    const triggers = [...targets.map((url) => ({ action: 'create', url, method: 'POST' })), { action: 'create', url: `${receiver.url}/hook`, method: 'POST' }];
    await createCollection(server, { name: 'events', fields: [{ name: 'title', type: 'text' }], options: { triggers } });
    assert.equal((await server.admin('POST', '/api/collections/events/records', { body: { title: 'hello' } })).status, 200);
    await receiver.waitForRequests(1);
    const logs = await waitFor(
      async () => {
        const res = await server.admin('GET', '/api/webhooks/logs?collection=events&perPage=500');
        const failed = res.body.items.filter((l: any) => l.status !== 'success');
        return failed.length >= targets.length * 2 && res.body.items;
      },
      { what: 'every refused attempt logged' },
    );
    for (const url of targets) {
      const attempts = logs.filter((l: any) => l.url === url);
      assert.ok(attempts.length >= 1, `no log for ${url}: ${JSON.stringify(logs.map((l: any) => l.url))}`);
      for (const a of attempts) {
        assert.notEqual(a.status, 'success');
        assert.match(a.error, /link-local|metadata/, `${url}: ${a.error}`);
      }
    }
    assert.equal(receiver.requests.length, 1);
  });
});
