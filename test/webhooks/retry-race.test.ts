import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/** Retries of one log sent at once: one attempt of the event at a time, as for every event. */
describe('webhooks: retries sent at once', () => {
  let server: TestServer;
  let receiver: Receiver;
  before(async () => {
    server = await startServer({ env: { CAIRN_WEBHOOK_TIMEOUT_MS: '1000', CAIRN_WEBHOOK_MAX_ATTEMPTS: '1' } });
    receiver = await startReceiver();
    await createCollection(server, { name: 'sent', fields: [{ name: 'title', type: 'text' }], options: { triggers: [{ action: 'create', url: `${receiver.url}/sent`, method: 'POST' }] } });
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  test('never two attempts of the event in flight; a retry while one is under way is a 409', async () => {
    const created = await server.admin('POST', '/api/collections/sent/records', { body: { title: 'once' } });
    assert.equal(created.status, 200, created.text);
    const log = await waitFor(async () => (await server.admin('GET', '/api/webhooks/logs?collection=sent&status=success')).body.items[0]);
    // From now on the receiver holds each attempt until it times out.
    let most = 0;
    receiver.respond(() => {
      most = Math.max(most, receiver.hanging + 1);
      return 'hang';
    });
    for (let round = 0; round < 3; round++) {
      const sent = receiver.requests.length;
      const replies = await Promise.all(Array.from({ length: 8 }, () => server.admin('POST', `/api/webhooks/logs/${log.id}/retry`)));
      assert.deepEqual(
        replies.filter((r) => r.status !== 200 && r.status !== 409).map((r) => r.text),
        [],
      );
      assert.ok(replies.some((r) => r.status === 200), `round ${round}: ${replies.map((r) => r.text).join('\n')}`);
      await waitFor(() => receiver.requests.length > sent, { what: 'the retried attempt' });
      // Held by the receiver now: every retry waits for it.
      const during = await Promise.all(Array.from({ length: 4 }, () => server.admin('POST', `/api/webhooks/logs/${log.id}/retry`)));
      assert.deepEqual(
        during.map((r) => r.status),
        [409, 409, 409, 409],
      );
      // The attempt ends as failed (one attempt allowed) once the receiver has not answered in time.
      await waitFor(async () => (await server.admin('GET', `/api/webhooks/logs?collection=sent&status=failed`)).body.totalItems === round + 1, {
        timeoutMs: 10_000,
        what: 'the held attempt to fail',
      });
    }
    assert.equal(most, 1, 'two attempts of one event were in flight at once');
  });
});
