import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

// PocketBase writes dates with a space between date and time, and a record's keys sorted by their
// bytes (its encoder writes the record as a map): API contract §23.
const PB_DATE = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const sortedBytes = (keys: string[]) => [...keys].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));

/** The keys of a JSON object's text in the order they were written (JSON.parse keeps it for names). */
function keysOf(text: string, path: (v: any) => any = (v) => v): string[] {
  return Object.keys(path(JSON.parse(text)));
}

describe('records in PocketBase order and date format', () => {
  let server: TestServer;
  let writerId: string;
  let postId: string;

  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'writers', fields: [{ name: 'name', type: 'text' }, { name: 'Alias', type: 'text' }] });
    await createCollection(server, {
      name: 'posts',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'Zeta', type: 'number' },
        { name: 'writer', type: 'relation', options: { toCollection: 'writers', maxSelect: 1 } },
        { name: 'due', type: 'date' },
        { name: 'body', type: 'editor' },
        { name: 'flag', type: 'bool' },
        { name: 'secret', type: 'text', hidden: true },
      ],
      listRule: '',
      viewRule: '',
    });
    const writer = await server.admin('POST', '/api/collections/writers/records', { body: { name: 'Ann', Alias: 'A' } });
    assert.equal(writer.status, 200, writer.text);
    writerId = writer.body.id;
    const post = await server.admin('POST', '/api/collections/posts/records', { body: { title: 'First', Zeta: 2, writer: writerId, due: '2026-12-01T23:18:21.453Z', body: '<p>x</p>', flag: true, secret: 's' } });
    assert.equal(post.status, 200, post.text);
    postId = post.body.id;
  });
  after(async () => {
    await server?.close();
  });

  test('a record answers its keys sorted by their bytes, collectionId and collectionName among them', async () => {
    const expected = ['Zeta', 'body', 'collectionId', 'collectionName', 'created', 'due', 'flag', 'id', 'secret', 'title', 'updated', 'writer'];
    assert.deepEqual(sortedBytes(expected), expected);
    const viewed = await server.admin('GET', `/api/collections/posts/records/${postId}`);
    assert.deepEqual(keysOf(viewed.text), expected);
    const listed = await server.admin('GET', '/api/collections/posts/records');
    assert.deepEqual(keysOf(listed.text, (v) => v.items[0]), expected);
    const created = await server.admin('POST', '/api/collections/posts/records', { body: { title: 'Second' } });
    assert.deepEqual(keysOf(created.text), expected);
    const updated = await server.admin('PATCH', `/api/collections/posts/records/${created.body.id}`, { body: { Zeta: 5 } });
    assert.deepEqual(keysOf(updated.text), expected);
    // A guest does not see the hidden field; the others keep their order.
    const guest = await server.request('GET', `/api/collections/posts/records/${postId}`);
    assert.deepEqual(keysOf(guest.text), expected.filter((k) => k !== 'secret'));
  });

  test('an auth record: email, emailVisibility and verified sorted with the rest', async () => {
    const user = await server.request('POST', '/api/collections/users/records', { body: { email: 'order@example.com', password: 'password-123', passwordConfirm: 'password-123', name: 'O' } });
    assert.equal(user.status, 200, user.text);
    assert.deepEqual(keysOf(user.text), sortedBytes(keysOf(user.text)));
    const viewed = await server.admin('GET', `/api/collections/users/records/${user.body.id}`);
    const keys = keysOf(viewed.text);
    assert.deepEqual(keys, sortedBytes(keys));
    for (const k of ['email', 'emailVisibility', 'verified', 'collectionId', 'id', 'created']) assert.ok(keys.includes(k), k);
    assert.ok(!keys.includes('password') && !keys.includes('tokenKey'));
  });

  test('expand sits at its sorted place, and its own keys are sorted too', async () => {
    const viewed = await server.admin('GET', `/api/collections/posts/records/${postId}?expand=writer,writer`);
    assert.equal(viewed.status, 200, viewed.text);
    const keys = keysOf(viewed.text);
    assert.deepEqual(keys, sortedBytes(keys));
    assert.ok(keys.indexOf('expand') > keys.indexOf('due') && keys.indexOf('expand') < keys.indexOf('flag'), keys.join());
    assert.deepEqual(keysOf(viewed.text, (v) => v.expand.writer), ['Alias', 'collectionId', 'collectionName', 'created', 'id', 'name', 'updated']);
    // Back-relations, both spellings, in one expand: the expand map's keys come sorted.
    const back = await server.admin('GET', `/api/collections/writers/records/${writerId}?expand=posts_via_writer,posts(writer)`);
    assert.equal(back.status, 200, back.text);
    assert.deepEqual(keysOf(back.text, (v) => v.expand), ['posts(writer)', 'posts_via_writer']);
    assert.equal(back.body.expand['posts(writer)'][0].id, postId);
    assert.deepEqual(back.body.expand['posts(writer)'], back.body.expand.posts_via_writer);
    // Nested: each expanded record has its own `expand` at its place.
    const nested = await server.admin('GET', `/api/collections/writers/records/${writerId}?expand=posts_via_writer.writer`);
    const inner = nested.body.expand.posts_via_writer[0];
    assert.equal(inner.expand.writer.id, writerId);
    assert.deepEqual(keysOf(nested.text, (v) => v.expand.posts_via_writer[0]), sortedBytes(Object.keys(inner)));
  });

  test('fields picks in PocketBase order whatever order it names them in', async () => {
    const picked = await server.admin('GET', `/api/collections/posts/records/${postId}?fields=updated,title,id,expand.writer.name,Zeta&expand=writer`);
    assert.equal(picked.status, 200, picked.text);
    assert.deepEqual(keysOf(picked.text), ['Zeta', 'expand', 'id', 'title', 'updated']);
  });

  test('dates are written as PocketBase writes them: records, date fields, lists', async () => {
    const viewed = await server.admin('GET', `/api/collections/posts/records/${postId}`);
    assert.match(viewed.body.created, PB_DATE);
    assert.match(viewed.body.updated, PB_DATE);
    assert.equal(viewed.body.due, '2026-12-01 23:18:21.453Z');
    const listed = await server.admin('GET', '/api/collections/posts/records?filter=' + encodeURIComponent(`id = "${postId}"`));
    assert.equal(listed.body.items[0].due, '2026-12-01 23:18:21.453Z');
    assert.match(listed.body.items[0].created, PB_DATE);
  });

  test('filters take both forms of a date, and a date sent back as answered is kept', async () => {
    for (const due of ['2026-12-01 23:18:21.453Z', '2026-12-01T23:18:21.453Z']) {
      const found = await server.admin('GET', '/api/collections/posts/records?filter=' + encodeURIComponent(`due = "${due}"`));
      assert.equal(found.status, 200, found.text);
      assert.deepEqual(
        found.body.items.map((r: any) => r.id),
        [postId],
        due,
      );
    }
    const viewed = await server.admin('GET', `/api/collections/posts/records/${postId}`);
    const since = await server.admin('GET', '/api/collections/posts/records?filter=' + encodeURIComponent(`created >= "${viewed.body.created}" && id = "${postId}"`));
    assert.equal(since.body.items.length, 1);
    const later = await server.admin('GET', '/api/collections/posts/records?filter=' + encodeURIComponent(`created > "${viewed.body.created}" && id = "${postId}"`));
    assert.equal(later.body.items.length, 0);
    const again = await server.admin('PATCH', `/api/collections/posts/records/${postId}`, { body: { due: viewed.body.due } });
    assert.equal(again.status, 200, again.text);
    assert.equal(again.body.due, '2026-12-01 23:18:21.453Z');
  });

  test('collections write their dates as PocketBase, and filter by either form', async () => {
    const posts = await server.admin('GET', '/api/collections/posts');
    assert.match(posts.body.created, PB_DATE);
    assert.match(posts.body.updated, PB_DATE);
    for (const since of [posts.body.created, posts.body.created.replace(' ', 'T')]) {
      const found = await server.admin('GET', '/api/collections?perPage=500&filter=' + encodeURIComponent(`created >= "${since}" && name = "posts"`));
      assert.equal(found.status, 200, found.text);
      assert.deepEqual(
        found.body.items.map((c: any) => c.name),
        ['posts'],
        since,
      );
    }
  });
});
