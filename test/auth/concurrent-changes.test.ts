import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

/** The statuses of `replies`, counted: `{ 200: 1, 403: 9 }`. */
function tally(replies: readonly { status: number }[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const r of replies) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

/**
 * Changes of one API key or administrator sent at once are decided as if the requests came one after
 * the other: no change undoes another's, and no check is passed by two requests that together break it.
 */
describe('API keys and administrators: changes sent at once', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('PATCHes of different properties of one API key: each 200, every change kept', async () => {
    // Several rounds: one round may happen to be served one request at a time.
    for (let round = 0; round < 5; round++) {
      const key = await server.admin('POST', '/api/keys', { body: { name: 'k', roles: ['a'] } });
      assert.equal(key.status, 200, key.text);
      const replies = await Promise.all([
        server.admin('PATCH', `/api/keys/${key.body.id}`, { body: { name: 'renamed' } }),
        server.admin('PATCH', `/api/keys/${key.body.id}`, { body: { enabled: false } }),
        server.admin('PATCH', `/api/keys/${key.body.id}`, { body: { roles: ['b'] } }),
      ]);
      assert.deepEqual(tally(replies), { 200: 3 }, replies.map((r) => r.text).join('\n'));
      const { name, enabled, roles } = (await server.admin('GET', `/api/keys/${key.body.id}`)).body;
      assert.deepEqual({ name, enabled, roles }, { name: 'renamed', enabled: false, roles: ['b'] }, `round ${round}`);
    }
  });
});
