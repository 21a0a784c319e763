import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

/** The wire protocol of API contract §10 (PocketBase v0.22's), its limits and its refusals. */
describe('realtime protocol', () => {
  let server: TestServer;
  const streams: SseStream[] = [];
  const open = async () => {
    const s = await SseStream.open(server.url);
    streams.push(s);
    return s;
  };

  before(async () => {
    server = await startServer({ env: { CAIRN_REALTIME_KEEPALIVE_MS: '100', CAIRN_REALTIME_MAX_SUBSCRIPTIONS: '3', CAIRN_REALTIME_MAX_CLIENTS: '6' } });
    await createCollection(server, { name: 'posts', fields: [{ name: 'title', type: 'text' }], listRule: '', viewRule: '' });
  });
  after(async () => {
    for (const s of streams) s.close();
    await server?.close();
  });

  test('GET opens an event stream whose first message is PB_CONNECT with the client id', async () => {
    const s = await open();
    assert.equal(s.status, 200);
    assert.equal(s.headers['content-type'], 'text/event-stream');
    assert.equal(s.headers['cache-control'], 'no-store');
    const [connect] = s.events;
    assert.equal(connect.event, 'PB_CONNECT');
    assert.match(connect.id, /^[a-z0-9]{40}$/);
    assert.deepEqual(JSON.parse(connect.data), { clientId: connect.id });
    // Idle streams get comments (every 100 ms here).
    await waitFor(() => s.comments >= 2, { what: 'keep-alive comments' });

    const head = await fetch(`${server.url}/api/realtime`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-type'), 'text/event-stream');
  });

  test('topics: by name, name/*, id and one record; the event is the topic as subscribed, options included', async () => {
    const s = await open();
    const posts = (await server.admin('GET', '/api/collections/posts')).body;
    const existing = (await server.admin('POST', '/api/collections/posts/records', { body: { title: 'first' } })).body;
    const withOptions = `posts/*?options=${encodeURIComponent(JSON.stringify({ query: { fields: 'title' } }))}`;
    assert.equal((await subscribeRaw(server.url, s.clientId, ['posts', posts.id, `posts/${existing.id}`])).status, 204);
    // Subscriptions are replaced, not added to.
    assert.equal((await subscribeRaw(server.url, s.clientId, ['POSTS', withOptions, `posts/${existing.id}`])).status, 204);

    await server.admin('PATCH', `/api/collections/posts/records/${existing.id}`, { body: { title: 'second' } });
    await s.next((e) => e.event === `posts/${existing.id}`, 'the record topic');
    const events = s.events.slice(1);
    assert.deepEqual(
      events.map((e) => e.event).sort(),
      ['POSTS', `posts/${existing.id}`, withOptions].sort(),
    );
    // As an EventSource sees them: the id PB_CONNECT set stays the last event id.
    for (const e of events) assert.equal(e.id, s.clientId);
    assert.deepEqual(JSON.parse(events.find((e) => e.event === withOptions)!.data), { action: 'update', record: { title: 'second' } });
    const full = JSON.parse(events.find((e) => e.event === 'POSTS')!.data);
    assert.equal(full.action, 'update');
    assert.equal(full.record.id, existing.id);
    assert.equal(full.record.collectionId, posts.id);
  });

  test('a collection that does not exist yet is accepted, as PocketBase does, and followed once it does', async () => {
    const s = await open();
    assert.equal((await subscribeRaw(server.url, s.clientId, ['later/*', 'not/a/topic', ''])).status, 204);
    await createCollection(server, { name: 'later', fields: [{ name: 'title', type: 'text' }], listRule: '', viewRule: '' });
    await server.admin('POST', '/api/collections/later/records', { body: { title: 'now' } });
    const e = await s.next((x) => x.event === 'later/*', 'the new collection');
    assert.equal(JSON.parse(e.data).record.title, 'now');
  });

  test('subscription requests: 404 unknown client, 400 bad bodies and limits, in the error shape', async () => {
    const s = await open();
    const unknown = await subscribeRaw(server.url, 'nope', ['posts']);
    assert.equal(unknown.status, 404);
    assert.deepEqual(Object.keys(unknown.body).sort(), ['code', 'data', 'message', 'status']);

    const bad: Array<[unknown, string]> = [
      ['posts', 'subscriptions'],
      [[1], 'subscriptions'],
      [['a', 'b', 'c', 'd'], 'subscriptions'],
      [['x'.repeat(2501)], 'subscriptions'],
      [['posts\nevent:x'], 'subscriptions'],
    ];
    for (const [subscriptions, field] of bad) {
      const res = await subscribeRaw(server.url, s.clientId, subscriptions);
      assert.equal(res.status, 400, JSON.stringify(subscriptions).slice(0, 40));
      assert.equal(res.body.code, 400);
      assert.ok(res.body.data[field], JSON.stringify(res.body));
    }
    const noClient = await subscribeRaw(server.url, '', ['posts']);
    assert.equal(noClient.status, 400);
    assert.ok(noClient.body.data.clientId);
    const longId = await subscribeRaw(server.url, 'x'.repeat(256), ['posts']);
    assert.equal(longId.status, 400);
    const notObject = await fetch(`${server.url}/api/realtime`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '["posts"]' });
    assert.equal(notObject.status, 400);
    // Three topics is the limit here, and exactly three are fine.
    assert.equal((await subscribeRaw(server.url, s.clientId, ['a', 'b', 'c'])).status, 204);
    // The database must exist; a token must be valid.
    assert.equal((await subscribeRaw(server.url, s.clientId, ['posts'], { db: 'nope' })).status, 404);
    assert.equal((await subscribeRaw(server.url, s.clientId, ['posts'], { token: 'not-a-token' })).status, 401);
  });

  test('a client bound to a user stays that user: another user or a guest gets 403', async () => {
    const alice = await createUser(server, 'proto-alice@example.com');
    const bob = await createUser(server, 'proto-bob@example.com');
    const s = await open();
    // A guest client may become a user (PocketBase's SDK subscribes before signing in, then again).
    assert.equal((await subscribeRaw(server.url, s.clientId, ['posts'])).status, 204);
    assert.equal((await subscribeRaw(server.url, s.clientId, ['posts'], { token: alice.token })).status, 204);
    assert.equal((await subscribeRaw(server.url, s.clientId, ['posts'], { token: alice.token })).status, 204);
    const asBob = await subscribeRaw(server.url, s.clientId, ['posts'], { token: bob.token });
    assert.equal(asBob.status, 403);
    assert.equal(asBob.body.message, "The current and the previous request authorization don't match.");
    assert.equal((await subscribeRaw(server.url, s.clientId, ['posts'])).status, 403);
    assert.equal((await subscribeRaw(server.url, s.clientId, ['posts'], { token: server.adminToken })).status, 403);
  });

  test('two users binding one client at once: one 204, the other 403', async () => {
    const users = [await createUser(server, 'race-alice@example.com'), await createUser(server, 'race-bob@example.com')];
    for (let round = 0; round < 5; round++) {
      const count = server.services.realtime.clientCount;
      const s = await SseStream.open(server.url);
      const replies = await Promise.all(users.map((u) => subscribeRaw(server.url, s.clientId, ['posts'], { token: u.token })));
      assert.deepEqual(replies.map((r) => r.status).sort(), [204, 403], `round ${round}`);
      s.close();
      await waitFor(() => server.services.realtime.clientCount === count, { what: 'the closed stream to be forgotten' });
    }
  });

  test('clients beyond the cap are refused with a 400; a closed stream frees its place', async () => {
    await waitFor(() => server.services.realtime.clientCount === streams.filter((s) => !s.ended).length, { what: 'the client count to settle' });
    while (server.services.realtime.clientCount < 6) await open();
    const refused = await fetch(`${server.url}/api/realtime`);
    assert.equal(refused.status, 400);
    const body = await refused.json();
    assert.equal(body.code, 400);
    assert.match(body.message, /Too many realtime clients/);

    streams.pop()!.close();
    await waitFor(() => server.services.realtime.clientCount === 5, { what: 'the closed stream to be forgotten' });
    await open();
  });
});
