import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';

const SUCCESS = '/_/#/auth/oauth2-redirect-success';
const FAILURE = '/_/#/auth/oauth2-redirect-failure';

/**
 * PocketBase ≥ 0.38 ties a realtime client to the address its stream was opened from: a subscription
 * request, or the OAuth2 redirect for the SDK's popup flow, from another address does not reach it (a
 * client id learnt or guessed is no use elsewhere). Addresses here come through the proxy header the
 * settings trust.
 */
describe('realtime clients are bound to the address of their stream', () => {
  let server: TestServer;
  const from = (ip: string) => ({ 'x-forwarded-for': ip });

  before(async () => {
    server = await startServer();
    assert.equal((await server.admin('PATCH', '/api/settings', { body: { trustedProxy: { headers: ['X-Forwarded-For'] } } })).status, 200);
  });
  after(() => server?.close());

  test('a subscription request from another address is refused', async () => {
    const stream = await SseStream.open(server.url, '/api/realtime', from('10.0.0.1'));
    try {
      const elsewhere = await subscribeRaw(server.url, stream.clientId, ['users/*'], { headers: from('10.0.0.2') });
      assert.equal(elsewhere.status, 400);
      assert.deepEqual(elsewhere.body, { status: 400, code: 400, message: 'Invalid realtime client.', data: {} });
      assert.equal((await subscribeRaw(server.url, stream.clientId, ['users/*'], { headers: from('10.0.0.1') })).status, 204);
    } finally {
      stream.close();
    }
  });

  test("an OAuth2 redirect from another address fails, and the client waits no more", async () => {
    const stream = await SseStream.open(server.url, '/api/realtime', from('10.0.0.1'));
    const redirect = async (ip: string, code: string) =>
      (await fetch(`${server.url}/api/oauth2-redirect?state=${stream.clientId}&code=${code}`, { redirect: 'manual', headers: from(ip) })).headers.get('location');
    try {
      assert.equal((await subscribeRaw(server.url, stream.clientId, ['@oauth2'], { headers: from('10.0.0.1') })).status, 204);
      assert.equal(await redirect('10.0.0.2', 'stolen'), FAILURE);
      assert.equal(await redirect('10.0.0.1', 'late'), FAILURE, 'no longer waiting');
      assert.equal((await subscribeRaw(server.url, stream.clientId, ['@oauth2'], { headers: from('10.0.0.1') })).status, 204);
      assert.equal(await redirect('10.0.0.1', 'good'), SUCCESS);
      const message = await stream.next((e) => e.event === '@oauth2', 'the code');
      assert.equal(JSON.parse(message.data).code, 'good');
      assert.equal(stream.events.filter((e) => e.event === '@oauth2').length, 1, 'nothing of the refused redirects reached the client');
    } finally {
      stream.close();
    }
  });
});
