import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { skipOn } from '../helpers/postgres.ts';
import { startNodes, type TestNodes } from '../helpers/nodes.ts';
import { createCollection } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

describe('settings saved on one node act on the others', { skip: skipOn('sqlite', 'nodes share a PostgreSQL database') }, () => {
  let cluster: TestNodes;
  before(async () => {
    cluster = await startNodes(2);
    await createCollection(cluster.nodes[0], { name: 'items', type: 'base', fields: [{ name: 'title', type: 'text' }], createRule: '' });
  });
  after(() => cluster?.close());

  test('batch, trustedProxy and logs saved on node 1 hold on node 2', async () => {
    const [one, two] = cluster.nodes;
    const saved = await one.admin('PATCH', '/api/settings', {
      body: { batch: { maxRequests: 2 }, trustedProxy: { headers: ['X-Real-IP'], useLeftmostIP: false }, logs: { maxDays: 0 } },
    });
    assert.equal(saved.status, 200, saved.text);
    const batch = { requests: Array.from({ length: 3 }, () => ({ method: 'POST', url: '/api/collections/items/records', body: { title: 'x' } })) };
    await waitFor(async () => (await two.request('POST', '/api/batch', { body: batch })).status === 400, { what: 'node 2 to refuse a batch over the saved limit' });
    await waitFor(async () => (await two.admin('GET', '/api/health', { headers: { 'x-real-ip': '192.0.2.8' } })).body.data.realIP === '192.0.2.8', {
      what: 'node 2 to read the client address from X-Real-IP',
    });
    assert.equal(two.services.requestLogs.enabled, false);
    await one.admin('PATCH', '/api/settings', { body: { batch: { maxRequests: 50 }, logs: { maxDays: 7 } } });
    await waitFor(async () => (await two.request('POST', '/api/batch', { body: batch })).status === 200, { what: 'node 2 to take the raised limit' });
    assert.equal(two.services.requestLogs.enabled, true);
  });
});
