import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';

/**
 * Every path that reads records answers a non-admin only with what they may see. The filter and sort
 * probes are oracles: the answer for the true hidden value and for a wrong one must be the same for
 * Alice, while they differ for the administrator (so the probe does reach the data).
 */
describe('rules on every path that reads records', () => {
  let server: TestServer;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  const ids: Record<string, string> = {};

  before(async () => {
    server = await startServer();
    alice = await createUser(server, 'alice-rules@example.com', 'user-password-1', { name: 'Alice' });
    bob = await createUser(server, 'bob-rules@example.com', 'user-password-1', { name: 'Bob' });
    const owned = 'owner = @request.auth.id';
    await createCollection(server, { name: 'private', listRule: owned, viewRule: owned, updateRule: owned, deleteRule: owned, fields: [{ name: 'owner', type: 'relation', options: { toCollection: 'users' } }, { name: 'value', type: 'text' }] });
    await createCollection(server, {
      name: 'posts',
      listRule: '',
      viewRule: '',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'owner', type: 'relation', options: { toCollection: 'users' } },
        { name: 'priv', type: 'relation', options: { toCollection: 'private' } },
        { name: 'notes', type: 'text', hidden: true },
      ],
    });
    await createCollection(server, { name: 'secrets', fields: [{ name: 'value', type: 'text' }, { name: 'post', type: 'relation', options: { toCollection: 'posts' } }] });
    const make = async (collection: string, body: Record<string, unknown>) => {
      const res = await server.admin('POST', `/api/collections/${collection}/records`, { body });
      assert.equal(res.status, 200, res.text);
      return res.body.id as string;
    };
    ids.bobLow = await make('private', { owner: bob.id, value: 'aaa-bob-private' });
    ids.bobHigh = await make('private', { owner: bob.id, value: 'zzz-bob-private' });
    ids.alicePriv = await make('private', { owner: alice.id, value: 'alice-private' });
    ids.first = await make('posts', { title: 'first', owner: bob.id, priv: ids.bobHigh, notes: 'hidden-note' });
    ids.second = await make('posts', { title: 'second', owner: bob.id, priv: ids.bobLow });
    ids.third = await make('posts', { title: 'third', owner: alice.id, priv: ids.alicePriv });
    await make('secrets', { value: 'top-secret', post: ids.first });
    const migration = await server.admin('POST', '/api/migrations/save', {
      body: {
        name: 'secret_views',
        databases: {
          main: {
            collections: {
              secrets: { create_fts: { fields: ['value'] }, create_views: [{ name: 'secret_view', sql: 'SELECT id, value FROM secrets' }] },
              private: { create_fts: { fields: ['value'] } },
            },
          },
        },
      },
    });
    assert.equal(migration.status, 200, migration.text);
    const applied = await server.admin('POST', `/api/migrations/${migration.body.version}/apply`);
    assert.equal(applied.status, 200, applied.text);
  });
  after(() => server.close());

  const titles = async (token: string, query: string): Promise<string[]> => {
    const res = await server.request('GET', `/api/collections/posts/records?${query}`, { token });
    assert.equal(res.status, 200, `${query}: ${res.text}`);
    return res.body.items.map((r: { title: string }) => r.title);
  };
  const filter = (text: string) => `filter=${encodeURIComponent(text)}`;

  const probes: Array<[string, string, string]> = [
    ['a back-relation into a collection only admins may read', 'secrets_via_post.value = "top-secret"', 'secrets_via_post.value = "wrong"'],
    ['a back-relation, with a pattern', 'secrets_via_post.value ~ "top%"', 'secrets_via_post.value ~ "wrong%"'],
    ["a relation to another user's private record", 'priv.value = "zzz-bob-private"', 'priv.value = "wrong"'],
    ['a relation to a user record the caller may not view', 'owner.name = "Bob"', 'owner.name = "Nobody"'],
    ['two hops', 'priv.owner.name = "Bob"', 'priv.owner.name = "Nobody"'],
    ['an email that is not public', 'owner.email = "bob-rules@example.com"', 'owner.email = "wrong@example.com"'],
    ['a creation time of a hidden record', 'priv.created > "2000-01-01 00:00:00.000Z" && title != "third"', 'priv.created < "2000-01-01 00:00:00.000Z" && title != "third"'],
  ];
  for (const [what, truth, lie] of probes) {
    test(`filter through ${what} tells Alice nothing`, async () => {
      assert.notDeepEqual(await titles(server.adminToken, filter(truth)), await titles(server.adminToken, filter(lie)), 'the probe reaches the data');
      assert.deepEqual(await titles(alice.token, filter(truth)), await titles(alice.token, filter(lie)));
    });
  }

  test('filters still see the related records the caller may view', async () => {
    assert.deepEqual(await titles(alice.token, filter('priv.value = "alice-private"')), ['third']);
    assert.deepEqual(await titles(alice.token, filter('owner.name = "Alice"')), ['third']);
    assert.deepEqual(await titles(bob.token, filter('priv.value = "zzz-bob-private"')), ['first']);
  });

  test('sorting by a hidden related value does not order by it', async () => {
    // Bob's two posts relate to his private records "zzz…" and "aaa…".
    const bobs = filter('title != "third"');
    assert.deepEqual(await titles(server.adminToken, `${bobs}&sort=priv.value`), ['second', 'first']);
    assert.deepEqual(await titles(alice.token, `${bobs}&sort=priv.value`), ['first', 'second']);
    assert.deepEqual(await titles(alice.token, `${bobs}&sort=-priv.value`), ['first', 'second']);
  });

  test('expand leaves out related records the caller may not view, back-relations included', async () => {
    const res = await server.request('GET', '/api/collections/posts/records?expand=priv,owner,secrets_via_post&sort=title', { token: alice.token });
    assert.equal(res.status, 200, res.text);
    const [first, , third] = res.body.items;
    assert.deepEqual(first.expand, {});
    assert.equal(third.expand.priv.value, 'alice-private');
    assert.equal(third.expand.owner.id, alice.id);
    assert.equal(JSON.stringify(res.body).includes('bob-private'), false);
    assert.equal(JSON.stringify(res.body).includes('top-secret'), false);
  });

  test("realtime: a subscription's filter probes tell Alice nothing, and expand leaves out what she may not view", async () => {
    const topic = (query: Record<string, string>) => `posts/*?options=${encodeURIComponent(JSON.stringify({ query }))}`;
    const marker = `posts/${ids.third}`;
    // Per caller: the stream, and for each probe which of its truth and lie topics got the update.
    const probe = async (token: string) => {
      const s = await SseStream.open(server.url);
      const topics = [...probes.flatMap(([, truth, lie]) => [topic({ filter: truth }), topic({ filter: lie })]), topic({ expand: 'priv,owner,secrets_via_post' }), marker];
      assert.equal((await subscribeRaw(server.url, s.clientId, topics, { token })).status, 204);
      return s;
    };
    const asAdmin = await probe(server.adminToken);
    const asAlice = await probe(alice.token);
    await server.admin('PATCH', `/api/collections/posts/records/${ids.first}`, { body: { title: 'first' } });
    await server.admin('PATCH', `/api/collections/posts/records/${ids.third}`, { body: { title: 'third' } });
    for (const s of [asAdmin, asAlice]) await s.next((e) => e.event === marker, 'the marker update');
    const got = (s: SseStream, filter: string) => s.events.some((e) => e.event === topic({ filter }) && JSON.parse(e.data).record.id === ids.first);
    for (const [what, truth, lie] of probes) {
      assert.notEqual(got(asAdmin, truth), got(asAdmin, lie), `the probe through ${what} reaches the data`);
      assert.equal(got(asAlice, truth), got(asAlice, lie), `the probe through ${what} tells Alice nothing`);
    }
    const expanded = asAlice.events.filter((e) => e.event === topic({ expand: 'priv,owner,secrets_via_post' })).map((e) => e.data).join('\n');
    assert.ok(expanded.includes('alice-private'), 'her own related record is expanded');
    assert.equal(expanded.includes('bob-private') || expanded.includes('top-secret') || expanded.includes('hidden-note'), false);
    asAdmin.close();
    asAlice.close();
  });

  test('hidden fields are neither shown nor filterable, directly or through a relation', async () => {
    const res = await server.request('GET', `/api/collections/posts/records/${ids.first}?fields=*`, { token: alice.token });
    assert.equal(res.status, 200);
    assert.equal('notes' in res.body, false);
    for (const text of ['notes ~ "hidden"', 'priv.owner.tokenKey != ""', 'owner.passwordHash != ""']) {
      const r = await server.request('GET', `/api/collections/posts/records?${filter(text)}`, { token: alice.token });
      assert.equal(r.status, 400, `${text}: ${r.text}`);
    }
  });

  test('@collection and @request in a filter are for administrators', async () => {
    const res = await server.request('GET', `/api/collections/posts/records?${filter('@collection.secrets.value ?= "top-secret"')}`, { token: alice.token });
    assert.equal(res.status, 403);
  });

  test('views and full-text search follow the rules of the collection listed', async () => {
    assert.equal((await server.request('GET', '/api/collections/secret_view/records', { token: alice.token })).status, 403);
    assert.equal((await server.request('GET', '/api/collections/secrets/records?search=secret', { token: alice.token })).status, 403);
    const own = await server.request('GET', '/api/collections/private/records?search=private', { token: alice.token });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(
      own.body.items.map((r: { value: string }) => r.value),
      ['alice-private'],
    );
    const admin = await server.admin('GET', '/api/collections/secret_view/records');
    assert.deepEqual(
      admin.body.items.map((r: { value: string }) => r.value),
      ['top-secret'],
    );
  });

  test('views, lists and totals of a rule-bound collection count only what the caller may list', async () => {
    const res = await server.request('GET', '/api/collections/private/records', { token: alice.token });
    assert.equal(res.body.totalItems, 1);
    assert.deepEqual(
      res.body.items.map((r: { value: string }) => r.value),
      ['alice-private'],
    );
    for (const id of [ids.bobLow, ids.bobHigh]) {
      assert.equal((await server.request('GET', `/api/collections/private/records/${id}`, { token: alice.token })).status, 404);
      assert.equal((await server.request('PATCH', `/api/collections/private/records/${id}`, { token: alice.token, body: { value: 'x' } })).status, 404);
      assert.equal((await server.request('DELETE', `/api/collections/private/records/${id}`, { token: alice.token })).status, 404);
    }
  });

  test("the auth endpoints return the caller's own record, with expand under the rules", async () => {
    const me = await server.request('GET', '/api/auth/me', { token: alice.token });
    assert.equal(me.body.id, alice.id);
    const other = await server.request('GET', `/api/collections/users/records/${bob.id}`, { token: alice.token });
    assert.equal(other.status, 404);
    const users = await server.request('GET', '/api/collections/users/records', { token: alice.token });
    assert.deepEqual(
      users.body.items.map((u: { id: string }) => u.id),
      [alice.id],
    );
  });
});
