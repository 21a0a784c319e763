import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * Changes of one cron job sent at once are decided as if the requests came one after the other: a
 * PATCH never brings back a job a DELETE removed, and PATCHes of different properties all count.
 */
describe('cron jobs: changes sent at once', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  async function createJob(): Promise<string> {
    const res = await server.admin('POST', '/api/webhooks/cron', { body: { name: 'j', schedule: '0 3 * * *', url: 'http://127.0.0.1:9/x', method: 'POST' } });
    assert.equal(res.status, 200, res.text);
    return res.body.id;
  }

  test('a PATCH beside a DELETE: the PATCH 200 before it or 404 after, the job gone either way', async () => {
    // Several rounds: which of the two comes first varies from one to the next.
    for (let round = 0; round < 8; round++) {
      const id = await createJob();
      const [patch, del] = await Promise.all([server.admin('PATCH', `/api/webhooks/cron/${id}`, { body: { name: 'p' } }), server.admin('DELETE', `/api/webhooks/cron/${id}`)]);
      assert.equal(del.status, 204, del.text);
      assert.ok(patch.status === 200 || patch.status === 404, patch.text);
      const now = await server.admin('GET', `/api/webhooks/cron/${id}`);
      assert.equal(now.status, 404, `round ${round}: the PATCH answered ${patch.status}, then the job read ${now.text}`);
    }
    assert.equal((await server.admin('GET', '/api/webhooks/cron')).body.totalItems, 0);
  });

  test('PATCHes of name, schedule and enabled: each 200, every change kept', async () => {
    for (let round = 0; round < 5; round++) {
      const id = await createJob();
      const replies = await Promise.all([
        server.admin('PATCH', `/api/webhooks/cron/${id}`, { body: { name: `renamed${round}` } }),
        server.admin('PATCH', `/api/webhooks/cron/${id}`, { body: { schedule: '*/5 * * * *' } }),
        server.admin('PATCH', `/api/webhooks/cron/${id}`, { body: { enabled: false } }),
      ]);
      assert.deepEqual(
        replies.map((r) => r.status),
        [200, 200, 200],
        replies.map((r) => r.text).join('\n'),
      );
      const { name, schedule, enabled } = (await server.admin('GET', `/api/webhooks/cron/${id}`)).body;
      assert.deepEqual({ name, schedule, enabled }, { name: `renamed${round}`, schedule: '*/5 * * * *', enabled: false }, `round ${round}`);
    }
  });
});
