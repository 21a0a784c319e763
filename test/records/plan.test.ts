import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startNodes, type TestNodes } from '../helpers/nodes.ts';
import { skipOn } from '../helpers/postgres.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

// A view or list runs what was built once per collection version (the SQL, the rule's compiled
// condition, the JSON renderer: docs/performance.md#plans). These tests send the same request twice
// with one thing changed in between, a rule, a field or the token, and require the second answer to
// follow the change: what was built for the first must never serve the second.

describe('a request after a change is answered by what changed', () => {
  let server: TestServer;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  let noteId: string;
  let collectionId: string;
  const view = () => `/api/collections/notes/records/${noteId}`;
  const list = '/api/collections/notes/records?sort=-created';

  before(async () => {
    server = await startServer();
    alice = await createUser(server, 'alice@example.com');
    bob = await createUser(server, 'bob@example.com');
    const created = await createCollection(server, {
      name: 'notes',
      listRule: '',
      viewRule: '',
      schema: [
        { name: 'title', type: 'text' },
        { name: 'secret', type: 'text' },
        { name: 'owner', type: 'relation', options: { toCollection: 'users', maxSelect: 1 } },
      ],
    });
    collectionId = created.id;
    const note = await server.admin('POST', '/api/collections/notes/records', { body: { title: 'first', secret: 's3cret', owner: alice.id } });
    assert.equal(note.status, 200, note.text);
    noteId = note.body.id;
  });
  after(async () => {
    await server?.close();
  });

  test('a rule changed between two identical requests decides the second', async () => {
    // Open rules: both users see the note (and the plan for this collection version is built).
    for (const who of [alice, bob]) {
      assert.equal((await server.request('GET', view(), { token: who.token })).status, 200);
      assert.equal((await server.request('GET', list, { token: who.token })).body.totalItems, 1);
    }
    const patched = await server.admin('PATCH', `/api/collections/${collectionId}`, { body: { viewRule: 'owner = @request.auth.id', listRule: 'owner = @request.auth.id' } });
    assert.equal(patched.status, 200, patched.text);

    const bobView = await server.request('GET', view(), { token: bob.token });
    assert.equal(bobView.status, 404, 'the owner rule hides the note from bob');
    assert.doesNotMatch(bobView.text, /s3cret/);
    const bobList = await server.request('GET', list, { token: bob.token });
    assert.equal(bobList.status, 200);
    assert.deepEqual([bobList.body.totalItems, bobList.body.items.length], [0, 0]);
    assert.equal((await server.request('GET', view(), { token: alice.token })).status, 200, 'the owner still sees it');
    assert.equal((await server.request('GET', view())).status, 404, 'a guest matches no owner');

    // Closed to everyone but administrators: 403 (PocketBase's answer for a null rule).
    assert.equal((await server.admin('PATCH', `/api/collections/${collectionId}`, { body: { listRule: null } })).status, 200);
    assert.equal((await server.request('GET', list, { token: alice.token })).status, 403);

    assert.equal((await server.admin('PATCH', `/api/collections/${collectionId}`, { body: { viewRule: '', listRule: '' } })).status, 200);
    assert.equal((await server.request('GET', view(), { token: bob.token })).status, 200, 'reopened');
  });

  test('a field changed between two identical requests shapes the second', async () => {
    const before = await server.request('GET', view());
    assert.equal(before.body.secret, 's3cret');
    const schema = (await server.admin('GET', `/api/collections/${collectionId}`)).body.schema as Array<Record<string, unknown>>;

    // Hidden (PocketBase ≥ 0.23's flag): gone for everyone but administrators.
    const hidden = schema.map((f) => (f.name === 'secret' ? { ...f, hidden: true } : f));
    assert.equal((await server.admin('PATCH', `/api/collections/${collectionId}`, { body: { schema: hidden } })).status, 200);
    const afterHiding = await server.request('GET', view());
    assert.equal(afterHiding.status, 200);
    assert.equal('secret' in afterHiding.body, false, afterHiding.text);
    assert.doesNotMatch((await server.request('GET', list)).text, /s3cret/);
    assert.equal((await server.admin('GET', view())).body.secret, 's3cret', 'administrators still see hidden fields');

    // A new field appears in the next answer; a removed one leaves it.
    const added = [...hidden.filter((f) => f.name !== 'title'), { name: 'summary', type: 'text' }];
    assert.equal((await server.admin('PATCH', `/api/collections/${collectionId}`, { body: { schema: added } })).status, 200);
    const afterAdding = await server.request('GET', view());
    assert.equal(afterAdding.body.summary, '');
    assert.equal('title' in afterAdding.body, false, afterAdding.text);
    const listed = await server.request('GET', list);
    assert.equal(listed.body.items[0].summary, '');
    assert.equal('title' in listed.body.items[0], false);
  });

  test('the token of each request decides, not the request before it', async () => {
    assert.equal((await server.admin('PATCH', `/api/collections/${collectionId}`, { body: { viewRule: 'owner = @request.auth.id' } })).status, 200);
    // Alternate the two users on the same URL: each answer is the caller's own.
    for (let i = 0; i < 3; i++) {
      assert.equal((await server.request('GET', view(), { token: alice.token })).status, 200);
      assert.equal((await server.request('GET', view(), { token: bob.token })).status, 404);
    }
    // A token that stopped being valid between two requests (the password changed: its key
    // rotated) is refused on the next one, though it is the same token on the same URL.
    const changed = await server.request('PATCH', `/api/collections/users/records/${alice.id}`, {
      token: alice.token,
      body: { oldPassword: 'user-password-1', password: 'user-password-2', passwordConfirm: 'user-password-2' },
    });
    assert.equal(changed.status, 200, changed.text);
    const stale = await server.request('GET', view(), { token: alice.token });
    assert.equal(stale.status, 401, stale.text);
    // And a deleted user's token likewise.
    assert.equal((await server.admin('DELETE', `/api/collections/users/records/${bob.id}`)).status, 204);
    assert.equal((await server.request('GET', view(), { token: bob.token })).status, 401);
  });
});

describe('a rule changed on one node decides the next request on another', { skip: skipOn('sqlite', 'nodes share a PostgreSQL database') }, () => {
  let cluster: TestNodes;

  before(async () => {
    cluster = await startNodes(2);
  });
  after(async () => {
    await cluster?.close();
  });

  test('the other node stops serving what the new rule forbids', async () => {
    const [one, two] = cluster.nodes;
    const created = await createCollection(one, { name: 'memos', listRule: '', viewRule: '', schema: [{ name: 'text', type: 'text' }] });
    const memo = await one.admin('POST', '/api/collections/memos/records', { body: { text: 'hello' } });
    const url = `/api/collections/memos/records/${memo.body.id}`;
    await waitFor(async () => (await two.request('GET', url)).status === 200, { what: 'the second node to serve the memo' });
    assert.equal((await one.admin('PATCH', `/api/collections/${created.id}`, { body: { viewRule: null } })).status, 200);
    // Nodes learn of a collection change through the database's notifications: poll with a deadline.
    await waitFor(async () => (await two.request('GET', url)).status === 403, { what: 'the second node to apply the closed rule' });
    assert.equal((await two.request('GET', '/api/collections/memos/records')).status, 200, 'the list rule is still open');
  });
});
