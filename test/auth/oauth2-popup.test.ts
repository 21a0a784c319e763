import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Provider, startProvider, useProvider } from '../helpers/oauth2.ts';
import { type TestNodes, startNodes } from '../helpers/nodes.ts';
import { skipOn } from '../helpers/postgres.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { closeSdkClients, SseStream, sdkClient, subscribeRaw } from '../helpers/sse.ts';

const SUCCESS = '/_/#/auth/oauth2-redirect-success';
const FAILURE = '/_/#/auth/oauth2-redirect-failure';

/**
 * The PocketBase SDK's all-in-one OAuth2 sign-in, `authWithOAuth2({ provider })`: its realtime client
 * waits on `@oauth2`, the provider sends the browser to `/api/oauth2-redirect` with the code and the
 * client's id as `state`, and the server hands the code to that client.
 */
describe('OAuth2 through the SDK’s realtime popup flow (/api/oauth2-redirect)', () => {
  let provider: Provider;
  let server: TestServer;

  before(async () => {
    provider = await startProvider();
    server = await startServer();
    await useProvider(server, provider);
  });
  after(async () => {
    await closeSdkClients();
    await server?.close();
    await provider?.close();
  });

  const redirect = (query: string, init: RequestInit = {}) => fetch(`${server.url}/api/oauth2-redirect?${query}`, { redirect: 'manual', ...init });

  test('the SDK signs a new user up: the provider’s redirect reaches the waiting client, which exchanges the code', async () => {
    provider.user = { sub: 'popup-1', email: 'popup@example.com', email_verified: true, name: 'Pop' };
    const pb = sdkClient(server.url);
    const popup: Array<{ status: number; location: string | null }> = [];
    const result = await pb.collection('users').authWithOAuth2({
      provider: 'mock',
      // Instead of a browser window: follow the provider's authorization, then its redirect here.
      urlCallback: async (url: string) => {
        const authorized = await fetch(url, { redirect: 'manual' });
        const back = authorized.headers.get('location');
        assert.ok(back?.startsWith(`${server.url}/api/oauth2-redirect?`), `the provider sends the browser back here: ${back}`);
        const done = await fetch(back!, { redirect: "manual" });
        popup.push({ status: done.status, location: done.headers.get('location') });
      },
    });
    assert.equal(result.record.email, 'popup@example.com');
    assert.equal(result.meta?.isNew, true);
    assert.ok(pb.authStore.isValid);
    assert.deepEqual(popup, [{ status: 307, location: SUCCESS }]);
  });

  test('the code goes only to a client waiting on @oauth2, once; an error or a missing code is a failure', async () => {
    const waiting = await SseStream.open(server.url);
    const other = await SseStream.open(server.url);
    try {
      assert.equal((await subscribeRaw(server.url, waiting.clientId, ['@oauth2'])).status, 204);
      assert.equal((await subscribeRaw(server.url, other.clientId, ['users/*'])).status, 204);
      for (const query of ['code=c1', `state=nobody&code=c1`, `state=${other.clientId}&code=c1`]) {
        const res = await redirect(query);
        assert.equal(res.status, 307, query);
        assert.equal(res.headers.get('location'), FAILURE, query);
      }
      const ok = await redirect(`state=${waiting.clientId}&code=c2`);
      assert.equal(ok.headers.get('location'), SUCCESS);
      const message = await waiting.next((e) => e.event === '@oauth2', 'the code');
      assert.deepEqual(JSON.parse(message.data), { state: waiting.clientId, code: 'c2' });
      // Handed once: the client waits no more.
      assert.equal((await redirect(`state=${waiting.clientId}&code=c3`)).headers.get('location'), FAILURE);
      assert.equal(other.events.filter((e) => e.event === '@oauth2').length, 0);

      // A provider's refusal reaches the client too, and the popup is told it failed.
      assert.equal((await subscribeRaw(server.url, waiting.clientId, ['@oauth2'])).status, 204);
      const refused = await redirect(`state=${waiting.clientId}&error=access_denied`);
      assert.equal(refused.headers.get('location'), FAILURE);
      const error = await waiting.next((e) => e.event === '@oauth2', 'the error', 10_000, waiting.events.indexOf(message) + 1);
      assert.deepEqual(JSON.parse(error.data), { state: waiting.clientId, code: '', error: 'access_denied' });
    } finally {
      waiting.close();
      other.close();
    }
  });

  test('a form POST (Apple’s form_post) is read as well, and answered 303', async () => {
    const waiting = await SseStream.open(server.url);
    try {
      assert.equal((await subscribeRaw(server.url, waiting.clientId, ['@oauth2'])).status, 204);
      const res = await fetch(`${server.url}/api/oauth2-redirect`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ state: waiting.clientId, code: 'apple-code' }).toString(),
      });
      assert.equal(res.status, 303);
      assert.equal(res.headers.get('location'), SUCCESS);
      const message = await waiting.next((e) => e.event === '@oauth2', 'the code');
      assert.equal(JSON.parse(message.data).code, 'apple-code');
    } finally {
      waiting.close();
    }
  });
});

/**
 * Behind a load balancer the provider's redirect may reach a node other than the one holding the
 * SDK's realtime stream: that node hands the code on, as it hands on a subscription request.
 */
describe('OAuth2’s popup flow over two nodes', { skip: skipOn('sqlite', 'nodes share a PostgreSQL database') }, () => {
  let provider: Provider;
  let cluster: TestNodes;

  before(async () => {
    provider = await startProvider();
    cluster = await startNodes(2);
    const [a] = cluster.nodes;
    await useProvider(a, provider);
  });
  after(async () => {
    await closeSdkClients();
    await cluster?.close();
    await provider?.close();
  });

  test('the SDK on node A signs in when the provider sends the popup to node B', async () => {
    const [a, b] = cluster.nodes;
    provider.user = { sub: 'popup-nodes', email: 'popup-nodes@example.com', email_verified: true, name: 'Pop' };
    const pb = sdkClient(a.url);
    const result = await pb.collection('users').authWithOAuth2({
      provider: 'mock',
      urlCallback: async (url: string) => {
        const back = (await fetch(url, { redirect: 'manual' })).headers.get('location');
        assert.ok(back?.startsWith(`${a.url}/api/oauth2-redirect?`), `the provider sends the browser back: ${back}`);
        // The load balancer's choice: node B. Asserted here, so a failure ends the SDK's wait at once.
        const done = await fetch(back!.replace(a.url, b.url), { redirect: 'manual' });
        assert.equal(done.headers.get('location'), SUCCESS);
      },
    });
    assert.equal(result.record.email, 'popup-nodes@example.com');
    assert.ok(pb.authStore.isValid);
  });

  test('handed on once, to the client waiting on @oauth2 only; an unknown client is a failure', async () => {
    const [a, b] = cluster.nodes;
    const waiting = await SseStream.open(a.url);
    const other = await SseStream.open(a.url);
    const redirect = (query: string) => fetch(`${b.url}/api/oauth2-redirect?${query}`, { redirect: 'manual' });
    try {
      assert.equal((await subscribeRaw(b.url, waiting.clientId, ['@oauth2'])).status, 204);
      assert.equal((await subscribeRaw(b.url, other.clientId, ['users/*'])).status, 204);
      for (const query of ['state=nobody&code=c1', `state=${other.clientId}&code=c1`]) {
        assert.equal((await redirect(query)).headers.get('location'), FAILURE, query);
      }
      assert.equal((await redirect(`state=${waiting.clientId}&code=c2`)).headers.get('location'), SUCCESS);
      const message = await waiting.next((e) => e.event === '@oauth2', 'the code');
      assert.deepEqual(JSON.parse(message.data), { state: waiting.clientId, code: 'c2' });
      assert.equal((await redirect(`state=${waiting.clientId}&code=c3`)).headers.get('location'), FAILURE, 'the client waits no more');
      assert.equal(other.events.filter((e) => e.event === '@oauth2').length, 0);
    } finally {
      waiting.close();
      other.close();
    }
  });
});
