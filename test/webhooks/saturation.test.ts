import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

// A burst of writes keeps the server's event loop busy, so delivery may defer (src/webhooks/sqlite/pacer.ts):
// every event must still arrive, each record's in commit order, once the burst is over or the events
// have waited the bound (kept short here so the test does not wait for the default).
let server: TestServer;
let receiver: Receiver;

before(async () => {
  server = await startServer({ env: { CAIRN_WEBHOOK_MAX_DEFER_MS: '500' } });
  receiver = await startReceiver();
});
after(async () => {
  await server.close();
  await receiver.close();
});

test('a burst of writes delivers every event, each record in order', async () => {
  const url = `${receiver.url}/hook`;
  await createCollection(server, {
    name: 'burst',
    fields: [{ name: 'n', type: 'number' }],
    options: { triggers: [{ action: 'create', url }, { action: 'update', url }] },
  });
  const RECORDS = 40;
  const UPDATES = 5;
  await Promise.all(
    Array.from({ length: RECORDS }, async () => {
      const created = await server.admin('POST', '/api/collections/burst/records', { body: { n: 0 } });
      assert.equal(created.status, 200, created.text);
      for (let n = 1; n <= UPDATES; n++) {
        const res = await server.admin('PATCH', `/api/collections/burst/records/${created.body.id}`, { body: { n } });
        assert.equal(res.status, 200, res.text);
      }
    }),
  );
  const requests = await receiver.waitForRequests(RECORDS * (UPDATES + 1));
  const byRecord = new Map<string, number[]>();
  for (const r of requests) {
    const list = byRecord.get(r.json.record.id) ?? [];
    list.push(r.json.record.n);
    byRecord.set(r.json.record.id, list);
  }
  assert.equal(byRecord.size, RECORDS);
  for (const [id, ns] of byRecord) assert.deepEqual(ns, [0, 1, 2, 3, 4, 5], `record ${id}`);
});
