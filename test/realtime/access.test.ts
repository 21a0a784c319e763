import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

type User = Awaited<ReturnType<typeof createUser>>;

/**
 * Who gets which message (API contract §10): the record API's rules per client (listRule for a
 * collection's topics, viewRule for one record's), the record as that client's view shows it, deletes
 * decided on the record's last state, and credentials re-checked before sending.
 */
describe('realtime access', () => {
  let server: TestServer;
  let alice: User;
  let bob: User;
  const streams: SseStream[] = [];
  let markers = 0;

  /** A stream subscribed to `topics` (and to the marker topic) as `token`. */
  async function client(topics: string[], token?: string): Promise<SseStream> {
    const s = await SseStream.open(server.url);
    streams.push(s);
    const res = await subscribeRaw(server.url, s.clientId, [...topics, 'marker'], { token });
    assert.equal(res.status, 204, JSON.stringify(res.body));
    return s;
  }

  /** Waits until every stream given has received a new marker: what was sent before it has arrived. */
  async function settle(...clients: SseStream[]): Promise<void> {
    const n = ++markers;
    await server.admin('POST', '/api/collections/marker/records', { body: { n } });
    for (const s of clients) await s.next((e) => e.event === 'marker' && JSON.parse(e.data).record.n === n, `marker ${n}`);
  }

  /** The non-marker messages of a stream. */
  const messages = (s: SseStream) => s.messages().filter((m) => m.event !== 'marker');

  before(async () => {
    server = await startServer();
    alice = await createUser(server, 'alice@example.com');
    bob = await createUser(server, 'bob@example.com');
    await createCollection(server, { name: 'marker', fields: [{ name: 'n', type: 'number' }], listRule: '', viewRule: '' });
    await createCollection(server, {
      name: 'docs',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'n', type: 'number' },
        { name: 'flag', type: 'bool' },
        { name: 'meta', type: 'json' },
        { name: 'tags', type: 'select', options: { values: ['a', 'b', 'c'], maxSelect: 3 } },
        { name: 'owner', type: 'relation', options: { toCollection: 'users', maxSelect: 1 } },
        { name: 'secret', type: 'text', hidden: true },
      ],
      listRule: 'owner = @request.auth.id',
      viewRule: 'owner = @request.auth.id || flag = true',
    });
  });
  after(async () => {
    for (const s of streams) s.close();
    await server?.close();
  });

  test('listRule decides collection topics, viewRule record topics; null rules are for administrators', async () => {
    await createCollection(server, { name: 'listonly', fields: [{ name: 'title', type: 'text' }], listRule: '', viewRule: null });
    await createCollection(server, { name: 'locked', fields: [{ name: 'title', type: 'text' }] });
    const shared = (await server.admin('POST', '/api/collections/docs/records', { body: { title: 'shared', owner: alice.id, flag: true } })).body;
    const item = (await server.admin('POST', '/api/collections/listonly/records', { body: { title: 'x' } })).body;
    const locked = (await server.admin('POST', '/api/collections/locked/records', { body: { title: 'x' } })).body;

    const ownerAll = await client(['docs/*'], alice.token);
    const otherAll = await client(['docs/*'], bob.token);
    const otherOne = await client([`docs/${shared.id}`], bob.token);
    const guest = await client([`docs/${shared.id}`, 'listonly/*', `listonly/${item.id}`, 'locked/*', `locked/${locked.id}`]);
    const admin = await client(['locked/*', `locked/${locked.id}`], server.adminToken);

    await server.admin('PATCH', `/api/collections/docs/records/${shared.id}`, { body: { title: 'edited' } });
    await server.admin('PATCH', `/api/collections/listonly/records/${item.id}`, { body: { title: 'edited' } });
    await server.admin('PATCH', `/api/collections/locked/records/${locked.id}`, { body: { title: 'edited' } });
    await settle(ownerAll, otherAll, otherOne, guest, admin);

    assert.deepEqual(messages(ownerAll).map((m) => m.event), ['docs/*']);
    assert.deepEqual(messages(otherAll), [], 'the list rule keeps another user out of the collection topic');
    assert.deepEqual(messages(otherOne).map((m) => m.event), [`docs/${shared.id}`], 'the view rule lets them see the shared record');
    assert.deepEqual(messages(guest).map((m) => m.event).sort(), [`docs/${shared.id}`, 'listonly/*'].sort());
    assert.deepEqual(messages(admin).map((m) => m.event).sort(), ['locked/*', `locked/${locked.id}`].sort());
  });

  test('hidden fields and emails are as a view shows them to each client', async () => {
    await server.admin('PATCH', '/api/collections/users', { body: { listRule: '', viewRule: '' } });
    const admin = await client(['docs/*', 'users/*'], server.adminToken);
    const owner = await client(['docs/*', 'users/*'], alice.token);
    const other = await client(['users/*'], bob.token);

    await server.admin('POST', '/api/collections/docs/records', { body: { title: 'mine', owner: alice.id, secret: 's3cret' } });
    await server.admin('PATCH', `/api/collections/users/records/${alice.id}`, { body: { name: 'Alice' } });
    await settle(admin, owner, other);
    const docOf = (s: SseStream) => messages(s).find((m) => m.event === 'docs/*')!.record;
    const userOf = (s: SseStream) => messages(s).find((m) => m.event === 'users/*')!.record;
    assert.equal(docOf(admin).secret, 's3cret');
    assert.equal('secret' in docOf(owner), false);
    assert.equal(userOf(admin).email, 'alice@example.com');
    assert.equal(userOf(owner).email, 'alice@example.com', 'a user sees their own email');
    assert.equal('email' in userOf(other), false, 'and nobody else does while emailVisibility is off');
    for (const s of [admin, owner, other]) assert.equal('tokenKey' in userOf(s) || 'passwordHash' in userOf(s), false);

    await server.admin('PATCH', `/api/collections/users/records/${alice.id}`, { body: { emailVisibility: true } });
    await settle(other);
    assert.equal(messages(other).at(-1)!.record.email, 'alice@example.com');
  });

  test('a delete reaches those who could see the record, decided on its last state', async () => {
    const owner = await client(['docs/*?options=' + encodeURIComponent(JSON.stringify({ query: { filter: 'n > 5 && flag = true && tags ?= "b" && meta.k = "v"' } }))], alice.token);
    const other = await client(['docs/*'], bob.token);
    const match = { owner: alice.id, n: 6, flag: true, tags: ['a', 'b'], meta: { k: 'v' } };
    const kept = [
      (await server.admin('POST', '/api/collections/docs/records', { body: { ...match, title: 'match' } })).body,
      (await server.admin('POST', '/api/collections/docs/records', { body: { ...match, title: 'small', n: 5 } })).body,
      (await server.admin('POST', '/api/collections/docs/records', { body: { ...match, title: 'off', flag: false } })).body,
      (await server.admin('POST', '/api/collections/docs/records', { body: { ...match, title: 'tags', tags: ['a', 'c'] } })).body,
      (await server.admin('POST', '/api/collections/docs/records', { body: { ...match, title: 'meta', meta: { k: 'w' } } })).body,
    ];
    for (const r of kept) await server.admin('DELETE', `/api/collections/docs/records/${r.id}`);
    await settle(owner, other);
    assert.deepEqual(
      messages(owner).map((m) => `${m.action} ${m.record.title}`),
      ['create match', 'delete match'],
    );
    const deleted = messages(owner)[1].record;
    assert.equal(deleted.id, kept[0].id);
    assert.equal(deleted.n, 6);
    assert.deepEqual(deleted.tags, ['a', 'b']);
    assert.equal('secret' in deleted, false);
    assert.deepEqual(messages(other), []);

    // Auth records: the email and the booleans as stored, on the snapshot as on the live rows (what
    // the list API shows decides it: on SQLite the email compares without case).
    await createCollection(server, {
      name: 'members',
      type: 'auth',
      fields: [],
      listRule: '(email = "MEMBER@EXAMPLE.COM" || email = "exact@example.com") && emailVisibility = true',
    });
    const guest = await client(['members/*']);
    const member = async (email: string, emailVisibility: boolean) =>
      (await server.admin('POST', '/api/collections/members/records', { body: { email, emailVisibility, password: 'member-password-1', passwordConfirm: 'member-password-1' } })).body;
    const members = [await member('member@example.com', true), await member('exact@example.com', true), await member('other@example.com', true), await member('exact2@example.com', false)];
    const listed = (await server.request('GET', '/api/collections/members/records')).body.items.map((r: { email: string }) => r.email).sort();
    assert.ok(listed.includes('exact@example.com'), JSON.stringify(listed));
    for (const r of members) await server.admin('DELETE', `/api/collections/members/records/${r.id}`);
    await settle(guest);
    const sent = (action: string) => messages(guest).filter((m) => m.action === action).map((m) => m.record.email).sort();
    assert.deepEqual(sent('create'), listed);
    assert.deepEqual(sent('delete'), listed);
  });

  test("a subscription's headers reach the rules; @request in a non-admin's filter is refused", async () => {
    await createCollection(server, { name: 'gated', fields: [{ name: 'title', type: 'text' }], listRule: '@request.headers.x_token = "abc"' });
    const options = (o: object) => `gated/*?options=${encodeURIComponent(JSON.stringify(o))}`;
    const withHeader = await client([options({ headers: { 'X-Token': 'abc' } })]);
    const wrongHeader = await client([options({ headers: { 'X-Token': 'abd' } })]);
    const refusedFilter = await client([options({ headers: { 'X-Token': 'abc' }, query: { filter: '@request.auth.id = ""' } })]);
    await server.admin('POST', '/api/collections/gated/records', { body: { title: 'g' } });
    await settle(withHeader, wrongHeader, refusedFilter);
    assert.equal(messages(withHeader).length, 1);
    assert.deepEqual(messages(wrongHeader), []);
    assert.deepEqual(messages(refusedFilter), []);
  });

  test('revoked credentials stop the events: a password change, a disabled API key', async () => {
    const carol = await createUser(server, 'carol@example.com');
    const key = (await server.admin('POST', '/api/keys', { body: { name: 'reader', roles: ['reader'] } })).body;
    const asCarol = await client(['marker'], carol.token);
    const asKey = await client(['marker'], key.key);
    await settle(asCarol, asKey);

    await server.admin('PATCH', `/api/collections/users/records/${carol.id}`, { body: { password: 'carol-password-2', passwordConfirm: 'carol-password-2' } });
    await server.admin('PATCH', `/api/keys/${key.id}`, { body: { enabled: false } });
    const before = [asCarol.events.length, asKey.events.length];
    await server.admin('POST', '/api/collections/marker/records', { body: { n: -1 } });
    await waitFor(() => asCarol.ended && asKey.ended, { what: 'both streams to be closed' });
    assert.deepEqual([asCarol.events.length, asKey.events.length], before, 'nothing was sent to them');
  });

  test('an expired token stops the events', async () => {
    const db = await server.services.registry.get('main');
    const users = await server.services.collections.get(db, 'users');
    const { tokenKey } = (await db.get<{ tokenKey: string }>('SELECT "tokenKey" FROM users WHERE id = ?', [bob.id]))!;
    const shortLived = await server.services.tokens.sign({ id: bob.id, type: 'authRecord', collectionId: users.id, db: 'main', tokenKey }, 3);
    const s = await client([], shortLived);
    await settle(s);
    await waitFor(
      async () => {
        await server.admin('POST', '/api/collections/marker/records', { body: { n: -2 } });
        return s.ended;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'the stream of an expired token to be closed' },
    );
  });
});
