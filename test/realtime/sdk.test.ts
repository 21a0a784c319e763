import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { RecordSubscription } from 'pocketbase';
import { spawnServer } from '../helpers/process.ts';
import { createCollection, createUser, request, startServer, type TestServer } from '../helpers/server.ts';
import { closeSdkClients, sdkClient } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

type Event = RecordSubscription<Record<string, any>>;

/** Collects an SDK subscription's events. */
function collector() {
  const events: Event[] = [];
  return {
    events,
    push: (e: Event) => events.push(e),
    next: (match: (e: Event) => boolean, what: string) => waitFor(() => events.find(match), { what }),
  };
}

/** The unmodified PocketBase JS SDK 0.21 subscribing to Cairn (API contract §10). */
describe('realtime with the PocketBase JS SDK', () => {
  let server: TestServer;
  let author: { id: string };
  let alice: { token: string; id: string; user: Record<string, any> };
  let bob: { token: string; id: string; user: Record<string, any> };

  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'authors', fields: [{ name: 'name', type: 'text' }], listRule: '', viewRule: '' });
    await createCollection(server, {
      name: 'posts',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'author', type: 'relation', options: { toCollection: 'authors', maxSelect: 1 } },
        { name: 'draft', type: 'text', hidden: true },
      ],
      listRule: '',
      viewRule: '',
      createRule: '',
      updateRule: '',
      deleteRule: '',
    });
    await createCollection(server, {
      name: 'notes',
      fields: [
        { name: 'text', type: 'text' },
        { name: 'owner', type: 'relation', options: { toCollection: 'users', maxSelect: 1 } },
      ],
      listRule: 'owner = @request.auth.id',
      viewRule: 'owner = @request.auth.id',
    });
    author = (await server.admin('POST', '/api/collections/authors/records', { body: { name: 'Ann' } })).body;
    alice = await createUser(server, 'alice@example.com');
    bob = await createUser(server, 'bob@example.com');
  });
  after(async () => {
    await closeSdkClients();
    await server?.close();
  });

  test("subscribe('*') and one record: create, update and delete with the record as a view shows it", async () => {
    const pb = sdkClient(server.url);
    const all = collector();
    const unsubscribeAll = await pb.collection('posts').subscribe('*', all.push);

    const created = await server.admin('POST', '/api/collections/posts/records', { body: { title: 'hello', author: author.id, draft: 'secret' } });
    const one = collector();
    const unsubscribeOne = await pb.collection('posts').subscribe(created.body.id, one.push);

    const create = await all.next((e) => e.action === 'create', 'the create event');
    assert.deepEqual(Object.keys(create.record).sort(), ['author', 'collectionId', 'collectionName', 'created', 'id', 'title', 'updated']);
    assert.equal(create.record.id, created.body.id);
    assert.equal(create.record.collectionName, 'posts');
    assert.equal(create.record.title, 'hello');
    assert.equal('draft' in create.record, false, 'a hidden field is not sent to a guest');

    await server.admin('PATCH', `/api/collections/posts/records/${created.body.id}`, { body: { title: 'edited' } });
    const update = await one.next((e) => e.action === 'update', 'the update event on the record topic');
    assert.equal(update.record.title, 'edited');
    await all.next((e) => e.action === 'update', 'the update event on the collection topic');

    await server.admin('DELETE', `/api/collections/posts/records/${created.body.id}`);
    const deleted = await one.next((e) => e.action === 'delete', 'the delete event on the record topic');
    assert.equal(deleted.record.id, created.body.id);
    assert.equal(deleted.record.title, 'edited');
    assert.equal('draft' in deleted.record, false);
    await all.next((e) => e.action === 'delete', 'the delete event on the collection topic');
    assert.deepEqual(
      all.events.map((e) => e.action),
      ['create', 'update', 'delete'],
    );

    await unsubscribeOne();
    await unsubscribeAll();
  });

  test('expand and fields are honoured; unsubscribing stops the events', async () => {
    const pb = sdkClient(server.url);
    const expanded = collector();
    const picked = collector();
    const authors = collector();
    const stopExpanded = await pb.collection('posts').subscribe('*', expanded.push, { expand: 'author' });
    const stopPicked = await pb.collection('posts').subscribe('*', picked.push, { fields: 'id,title' });
    await pb.collection('authors').subscribe('*', authors.push);

    await server.admin('POST', '/api/collections/posts/records', { body: { title: 'with author', author: author.id } });
    const e = await expanded.next(() => true, 'the expanded event');
    assert.equal(e.record.expand?.author?.name, 'Ann');
    const p = await picked.next(() => true, 'the picked event');
    assert.deepEqual(Object.keys(p.record).sort(), ['id', 'title']);

    await stopExpanded();
    await stopPicked();
    await server.admin('POST', '/api/collections/posts/records', { body: { title: 'after unsubscribe' } });
    // The authors topic shares the client's stream: its event comes after the post's would have.
    await server.admin('POST', '/api/collections/authors/records', { body: { name: 'marker' } });
    await authors.next((a) => a.record.name === 'marker', 'the marker on the remaining topic');
    assert.equal(expanded.events.length, 1);
    assert.equal(picked.events.length, 1);
    await pb.realtime.unsubscribe();
  });

  test('a user sees only what the rules allow, and nothing of another database', async () => {
    await server.admin('POST', '/api/databases', { body: { name: 'other' } });
    await createCollection(server, { name: 'posts', fields: [{ name: 'title', type: 'text' }], listRule: '', viewRule: '' }, 'other');

    const asAlice = sdkClient(server.url);
    asAlice.authStore.save(alice.token, alice.user);
    const asGuest = sdkClient(server.url);
    const aliceNotes = collector();
    const guestNotes = collector();
    const alicePosts = collector();
    await asAlice.collection('notes').subscribe('*', aliceNotes.push);
    await asAlice.collection('posts').subscribe('*', alicePosts.push);
    await asGuest.collection('notes').subscribe('*', guestNotes.push);
    const guestPosts = collector();
    await asGuest.collection('posts').subscribe('*', guestPosts.push);

    await server.admin('POST', '/api/collections/notes/records', { body: { text: "bob's", owner: bob.id } });
    await server.admin('POST', '/api/collections/notes/records', { body: { text: "alice's", owner: alice.id } });
    await server.admin('POST', '/api/collections/posts/records', { body: { title: 'elsewhere' }, db: 'other' });
    await server.admin('POST', '/api/collections/posts/records', { body: { title: 'marker' } });

    await aliceNotes.next((e) => e.record.text === "alice's", "alice's note");
    await alicePosts.next((e) => e.record.title === 'marker', 'the marker post (alice)');
    await guestPosts.next((e) => e.record.title === 'marker', 'the marker post (guest)');
    // Each client's events come in order on its one stream: what came before the markers is all.
    assert.deepEqual(
      aliceNotes.events.map((e) => e.record.text),
      ["alice's"],
    );
    assert.deepEqual(guestNotes.events, []);
    assert.deepEqual(
      alicePosts.events.map((e) => e.record.title),
      ['marker'],
    );
    assert.deepEqual(
      guestPosts.events.map((e) => e.record.title),
      ['marker'],
    );

    // A client following the other database sees its posts only.
    const other = sdkClient(server.url, 'other');
    const otherPosts = collector();
    await other.collection('posts').subscribe('*', otherPosts.push);
    await server.admin('POST', '/api/collections/posts/records', { body: { title: 'in main' } });
    await server.admin('POST', '/api/collections/posts/records', { body: { title: 'in other' }, db: 'other' });
    await otherPosts.next((e) => e.record.title === 'in other', 'the post of the other database');
    assert.deepEqual(
      otherPosts.events.map((e) => e.record.title),
      ['in other'],
    );
    for (const pb of [asAlice, asGuest, other]) await pb.realtime.unsubscribe();
  });
});

describe('realtime across a server restart', () => {
  test('the SDK reconnects and resubscribes by itself', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-rt-restart-'));
    const env = { CAIRN_ADMIN_EMAIL: 'admin@example.com', CAIRN_ADMIN_PASSWORD: 'admin-password-1' };
    let cairn = await spawnServer(dir, env);
    try {
      const admin = async (method: string, p: string, body?: unknown) => {
        const login = await request(cairn.url, 'POST', '/api/admins/auth-with-password', { body: { identity: env.CAIRN_ADMIN_EMAIL, password: env.CAIRN_ADMIN_PASSWORD } });
        return request(cairn.url, method, p, { body, token: login.body.token });
      };
      assert.equal((await admin('POST', '/api/collections', { name: 'posts', fields: [{ name: 'title', type: 'text' }], listRule: '', viewRule: '' })).status, 200);

      const pb = sdkClient(cairn.url);
      const posts = collector();
      await pb.collection('posts').subscribe('*', posts.push);
      await admin('POST', '/api/collections/posts/records', { title: 'before' });
      await posts.next((e) => e.record.title === 'before', 'the event before the restart');

      assert.equal(await cairn.kill('SIGTERM'), 0);
      cairn = await spawnServer(dir, env, [], cairn.port);
      // The SDK retries on its own schedule (at most 2 s apart): each probe writes a record until
      // one of them reaches the resubscribed client.
      let n = 0;
      await waitFor(
        async () => {
          await admin('POST', '/api/collections/posts/records', { title: `after ${n++}` });
          return posts.events.some((e) => e.record.title.startsWith('after'));
        },
        { timeoutMs: 20_000, intervalMs: 250, what: 'an event after the restart' },
      );
      await pb.realtime.unsubscribe();
    } finally {
      await closeSdkClients();
      await cairn.kill('SIGTERM');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
