import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * PATCHes of the settings sent at once are decided as if they came one after the other: each merges
 * its keys over the section as the PATCHes before it left it, so none undoes another's change.
 */
describe('settings: PATCHes sent at once', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('different keys of one section: each 200, every change kept', async () => {
    // Several rounds: one round may happen to be served one request at a time.
    for (let round = 0; round < 5; round++) {
      const replies = await Promise.all([
        server.admin('PATCH', '/api/settings', { body: { meta: { appName: `App${round}` } } }),
        server.admin('PATCH', '/api/settings', { body: { meta: { senderName: `Sender${round}` } } }),
        server.admin('PATCH', '/api/settings', { body: { meta: { senderAddress: `s${round}@example.com` } } }),
      ]);
      assert.deepEqual(
        replies.map((r) => r.status),
        [200, 200, 200],
        replies.map((r) => r.text).join('\n'),
      );
      const { appName, senderName, senderAddress } = (await server.admin('GET', '/api/settings')).body.meta;
      assert.deepEqual({ appName, senderName, senderAddress }, { appName: `App${round}`, senderName: `Sender${round}`, senderAddress: `s${round}@example.com` }, `round ${round}`);
    }
  });

  test('a refused PATCH beside accepted ones changes nothing of its own', async () => {
    const replies = await Promise.all([
      server.admin('PATCH', '/api/settings', { body: { meta: { appName: 'Kept' } } }),
      server.admin('PATCH', '/api/settings', { body: { meta: { senderName: 'Kept sender', senderAddress: 'not an address' } } }),
    ]);
    assert.deepEqual(
      replies.map((r) => r.status),
      [200, 400],
    );
    const meta = (await server.admin('GET', '/api/settings')).body.meta;
    assert.equal(meta.appName, 'Kept');
    assert.notEqual(meta.senderName, 'Kept sender');
  });
});
