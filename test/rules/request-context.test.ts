import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { form } from '../helpers/files.ts';
import { type Provider, startProvider, useProvider } from '../helpers/oauth2.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';

const REDIRECT = 'http://127.0.0.1:5173/oauth-callback';
const PASSWORD = 'pass-word-12345';

/** `@request.context` names where a rule is decided, as in PocketBase (v0.23+). */
describe('@request.context', () => {
  let server: TestServer;
  let provider: Provider;
  let memberToken: string;

  const add = async (collection: string, body: Record<string, unknown>) => {
    const res = await server.admin('POST', `/api/collections/${collection}/records`, { body });
    assert.equal(res.status, 200, res.text);
    return res.body as { id: string } & Record<string, any>;
  };
  /** An OAuth2 sign-in to `members` through PocketBase's route, the provider answering `user`. */
  const oauth2 = async (user: Record<string, unknown>) => {
    provider.user = user;
    const methods = await server.request('GET', `/api/collections/members/auth-methods?redirectUrl=${encodeURIComponent(REDIRECT)}`);
    const listing = methods.body.oauth2.providers.find((p: { name: string }) => p.name === 'mock');
    const { code } = await provider.authorize(listing.authUrl);
    return server.request('POST', '/api/collections/members/auth-with-oauth2', { body: { provider: 'mock', code, codeVerifier: listing.codeVerifier, redirectUrl: REDIRECT } });
  };

  before(async () => {
    provider = await startProvider();
    server = await startServer();
    await useProvider(server, provider);
    await createCollection(server, { name: 'members', type: 'auth', fields: [], listRule: '', viewRule: '' });
    await add('members', { email: 'member@example.com', password: PASSWORD, passwordConfirm: PASSWORD });
    const login = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'member@example.com', password: PASSWORD } });
    assert.equal(login.status, 200, login.text);
    memberToken = login.body.token;
  });
  after(async () => {
    await server?.close();
    await provider?.close();
  });

  test('is "default" for a request on its own, and names no sub-field', async () => {
    await createCollection(server, { name: 'plain', fields: [{ name: 'title', type: 'text' }], listRule: '@request.context = "default"', viewRule: '@request.context != "default"' });
    const one = await add('plain', { title: 'a' });
    const list = await server.request('GET', '/api/collections/plain/records');
    assert.deepEqual(list.body.items.map((r: { id: string }) => r.id), [one.id]);
    assert.equal((await server.request('GET', `/api/collections/plain/records/${one.id}`)).status, 404);
    const bad = await server.admin('PATCH', '/api/collections/plain', { body: { listRule: '@request.context.kind = "x"' } });
    assert.equal(bad.status, 400, bad.text);
  });

  test('is "expand" for the records an expand reads', async () => {
    await createCollection(server, { name: 'labels', fields: [{ name: 'name', type: 'text' }], listRule: '', viewRule: '@request.context != "expand"' });
    await createCollection(server, {
      name: 'cards',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'label', type: 'relation', collectionId: 'labels', maxSelect: 1 },
      ],
      listRule: '',
      viewRule: '',
    });
    const label = await add('labels', { name: 'red' });
    await add('cards', { title: 'one', label: label.id });
    assert.equal((await server.request('GET', `/api/collections/labels/records/${label.id}`)).status, 200);
    const cards = await server.request('GET', '/api/collections/cards/records?expand=label');
    assert.equal(cards.status, 200, cards.text);
    assert.deepEqual(cards.body.items[0].expand, {}, 'the label is not expanded');
  });

  test('is "realtime" for a realtime message', async () => {
    await createCollection(server, { name: 'quiet', fields: [{ name: 'n', type: 'number' }], listRule: '@request.context != "realtime"', viewRule: '@request.context != "realtime"' });
    await createCollection(server, { name: 'loud', fields: [{ name: 'n', type: 'number' }], listRule: '@request.context = "realtime"', viewRule: '@request.context = "realtime"' });
    const stream = await SseStream.open(server.url);
    try {
      assert.equal((await subscribeRaw(server.url, stream.clientId, ['quiet/*', 'loud/*'])).status, 204);
      await add('quiet', { n: 1 });
      const loud = await add('loud', { n: 2 });
      // Messages reach a client in commit order: the first to come is what the earlier create sent, if anything.
      const first = await stream.next((e) => e.event !== 'PB_CONNECT', 'a message');
      assert.equal(first.event, 'loud/*');
      assert.equal(JSON.parse(first.data).record.id, loud.id);
      assert.equal((await server.request('GET', '/api/collections/quiet/records')).body.items.length, 1, 'a list sees the quiet record');
      assert.equal((await server.request('GET', '/api/collections/loud/records')).body.items.length, 0, 'and not the loud one');
    } finally {
      stream.close();
    }
  });

  test('is "protectedFile" for a protected file’s download', async () => {
    await createCollection(server, {
      name: 'vault',
      fields: [{ name: 'doc', type: 'file', options: { maxSelect: 1, protected: true } }],
      listRule: '@request.context = "protectedFile"',
      viewRule: '@request.context = "protectedFile"',
      createRule: '',
    });
    const created = await server.request('POST', '/api/collections/vault/records', { raw: form([['doc', { name: 'note.txt', data: 'secret note' }]]) });
    assert.equal(created.status, 200, created.text);
    assert.equal((await server.request('GET', `/api/collections/vault/records/${created.body.id}`, { token: memberToken })).status, 404);
    const fileToken = (await server.request('POST', '/api/files/token', { token: memberToken })).body.token;
    const file = await server.request('GET', `/api/files/vault/${created.body.id}/${created.body.doc}?token=${encodeURIComponent(fileToken)}`);
    assert.equal(file.status, 200);
    assert.equal(file.text, 'secret note');
  });

  test('is "batch" for the requests of a batch', async () => {
    await server.admin('PATCH', '/api/settings', { body: { batch: { enabled: true, maxRequests: 10 } } });
    await createCollection(server, { name: 'batched', fields: [{ name: 'title', type: 'text' }], listRule: '', createRule: '@request.context = "batch"' });
    const alone = await server.request('POST', '/api/collections/batched/records', { body: { title: 'alone' } });
    assert.ok(alone.status === 400 || alone.status === 403, alone.text);
    const batch = await server.request('POST', '/api/batch', { body: { requests: [{ method: 'POST', url: '/api/collections/batched/records', body: { title: 'in a batch' } }] } });
    assert.equal(batch.status, 200, batch.text);
    assert.deepEqual((await server.request('GET', '/api/collections/batched/records')).body.items.map((r: { title: string }) => r.title), ['in a batch']);
  });

  test('the query, headers and method stay the request’s for a rule when the body has modifiers', async () => {
    await createCollection(server, {
      name: 'counters',
      fields: [{ name: 'n', type: 'number' }],
      listRule: '',
      viewRule: '',
      createRule: '@request.query.key = "k1" && @request.headers.x_team = "blue" && @request.method = "POST"',
      updateRule: '@request.query.key = "k1" && @request.headers.x_team = "blue"',
    });
    const headers = { 'x-team': 'blue' };
    const created = await server.request('POST', '/api/collections/counters/records?key=k1', { body: { 'n+': 2 }, headers });
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body.n, 2);
    const bumped = await server.request('PATCH', `/api/collections/counters/records/${created.body.id}?key=k1`, { body: { 'n+': 3 }, headers });
    assert.equal(bumped.status, 200, bumped.text);
    assert.equal(bumped.body.n, 5);
    const wrongKey = await server.request('PATCH', `/api/collections/counters/records/${created.body.id}?key=k2`, { body: { 'n+': 3 }, headers });
    assert.equal(wrongKey.status, 404, wrongKey.text);
  });

  test('is "password" and "oauth2" for those sign-ins: the auth rule, and the create rule of an OAuth2 sign-up', async () => {
    const settings = (body: Record<string, unknown>) => server.admin('PATCH', '/api/collections/members', { body });
    // A create rule closed to guests: no sign-up, by OAuth2 either (PocketBase runs its create as the caller's).
    assert.equal((await settings({ createRule: null })).status, 200);
    const refused = await oauth2({ sub: 'p-1', email: 'newcomer@example.com', email_verified: true });
    assert.equal(refused.status, 403, refused.text);
    assert.equal((await server.admin('GET', `/api/collections/members/records?filter=${encodeURIComponent('email="newcomer@example.com"')}`)).body.totalItems, 0);
    // Sign-ups through OAuth2 only; the rule reads the values of the record the sign-up makes as its body.
    assert.equal((await settings({ createRule: '@request.context = "oauth2" && @request.body.email ~ "@example.com"' })).status, 200);
    const direct = await server.request('POST', '/api/collections/members/records', { body: { email: 'direct@example.com', password: PASSWORD, passwordConfirm: PASSWORD } });
    assert.ok(direct.status === 400 || direct.status === 403, direct.text);
    const signedUp = await oauth2({ sub: 'p-1', email: 'newcomer@example.com', email_verified: true });
    assert.equal(signedUp.status, 200, signedUp.text);
    assert.equal(signedUp.body.meta.isNew, true);
    assert.equal(signedUp.body.record.verified, true, 'the provider verified the address');
    // Password sign-ins refused by the auth rule, OAuth2 ones let through.
    assert.equal((await settings({ authRule: '@request.context = "oauth2"' })).status, 200);
    const password = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'member@example.com', password: PASSWORD } });
    assert.equal(password.status, 403, password.text);
    assert.equal((await oauth2({ sub: 'p-1', email: 'newcomer@example.com', email_verified: true })).status, 200);
    assert.equal((await settings({ authRule: '@request.context = "password"' })).status, 200);
    assert.equal((await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'member@example.com', password: PASSWORD } })).status, 200);
    assert.equal((await oauth2({ sub: 'p-1', email: 'newcomer@example.com', email_verified: true })).status, 403);
  });
});
