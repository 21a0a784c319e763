import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

describe('PUT /api/collections/import', () => {
  let server: TestServer;
  let user: { token: string };
  before(async () => {
    server = await startServer();
    user = await createUser(server, 'import-user@example.com');
    await createCollection(server, { name: 'kept', fields: [{ name: 'title', type: 'text' }] });
    await createCollection(server, { name: 'dropped', fields: [{ name: 'title', type: 'text' }] });
  });
  after(() => server.close());

  const put = (body: unknown, token: string | null = server.adminToken) => server.request('PUT', '/api/collections/import', { body, token });
  const names = async () => (await server.admin('GET', '/api/collections?perPage=200')).body.items.map((c: { name: string }) => c.name) as string[];

  test('administrators only; an empty list is refused', async () => {
    assert.equal((await put({ collections: [] }, null)).status, 401);
    assert.equal((await put({ collections: [] }, user.token)).status, 403);
    const empty = await put({ collections: [] });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.data.collections.code, 'validation_required');
  });

  test('creates and updates in one go: tables, fields and indexes follow', async () => {
    const res = await put({
      collections: [
        { name: 'imported', fields: [{ name: 'label', type: 'text' }], indexes: ['create index idx_imported_label on imported (label)'] },
        { name: 'kept', fields: [{ name: 'title', type: 'text' }, { name: 'extra', type: 'number' }], listRule: '' },
        { name: 'members', type: 'auth' },
      ],
    });
    assert.equal(res.status, 204, res.text);
    const created = await server.request('POST', '/api/collections/imported/records', { body: { label: 'x' }, token: server.adminToken });
    assert.equal(created.status, 200, created.text);
    const kept = (await server.admin('GET', '/api/collections/kept')).body;
    assert.deepEqual(kept.schema.map((f: { name: string }) => f.name), ['title', 'extra']);
    assert.equal(kept.listRule, '');
    assert.ok((await names()).includes('members'));
  });

  test("PocketBase's own export: its system collections are Cairn's, its ids kept, relations naming them resolve", async () => {
    const res = await put({
      collections: [
        { id: 'pbc_3142635823', name: '_superusers', type: 'auth', system: true, fields: [] },
        { id: 'pbc_2281828961', name: '_externalAuths', type: 'base', system: true, fields: [] },
        { id: 'pbc_1125843985', name: '7posts', type: 'base', fields: [{ name: 'title', type: 'text' }], indexes: ['CREATE INDEX `_pbc_1125843985_title_idx` ON `7posts` (`title` COLLATE NOCASE)'] },
        { id: 'pbc_22', name: 'comments', type: 'base', fields: [{ name: 'post', type: 'relation', collectionId: 'pbc_1125843985', maxSelect: 1 }] },
      ],
    });
    assert.equal(res.status, 204, JSON.stringify(res.body));
    const posts = (await server.admin('GET', '/api/collections/7posts')).body;
    assert.equal(posts.id, 'pbc_1125843985', 'the id the export gives is kept');
    const comments = (await server.admin('GET', '/api/collections/pbc_22')).body;
    assert.equal(comments.fields.find((f: { name: string }) => f.name === 'post').collectionId, 'pbc_1125843985');
    const made = await server.admin('POST', '/api/collections/7posts/records', { body: { title: 'Hello' } });
    assert.equal(made.status, 200, made.text);
    const superusers = (await server.admin('GET', '/api/collections/_superusers')).body;
    assert.deepEqual(superusers.fields.map((f: { name: string }) => f.name), ['id', 'password', 'tokenKey', 'email', 'emailVisibility', 'verified', 'created', 'updated']);
  });

  test('one invalid collection changes nothing and is named in the error', async () => {
    const res = await put({ collections: [{ name: 'fine_one' }, { name: 'broken', fields: [{ name: 'expand', type: 'text' }] }] });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.collections.code, 'validation_collections_import_failure');
    assert.match(res.body.data.collections.message, /broken/);
    assert.ok(!(await names()).includes('fine_one'));
  });

  test('a new collection given twice (by name, in any case, or by id) is a 400 that names it', async () => {
    for (const collections of [
      [{ name: 'twice' }, { name: 'twice' }],
      [{ name: 'twice' }, { name: 'TWICE' }],
      [{ id: 'twiceid00000001', name: 'twice_a' }, { id: 'twiceid00000001', name: 'twice_b' }],
    ]) {
      const res = await put({ collections });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.data.collections.code, 'validation_collections_import_failure');
      assert.match(res.body.data.collections.message, /given twice|already exists/);
    }
    assert.ok(!(await names()).some((n: string) => n.toLowerCase().startsWith('twice')));
  });

  test('a view collection is imported with its query; its rules are checked against its columns', async () => {
    const bad = await put({ collections: [{ name: 'kept_titles', type: 'view', viewQuery: 'SELECT id, title FROM kept', listRule: "nope = 'x'" }] });
    assert.equal(bad.status, 400);
    assert.match(bad.body.data.collections.message, /kept_titles/);
    assert.ok(!(await names()).includes('kept_titles'));
    const res = await put({ collections: [{ name: 'kept_titles', type: 'view', viewQuery: 'SELECT id, title FROM kept', listRule: "title != ''" }] });
    assert.equal(res.status, 204, res.text);
    const view = await server.admin('GET', '/api/collections/kept_titles');
    assert.equal(view.body.type, 'view');
    assert.deepEqual(view.body.schema.map((f: { name: string }) => f.name), ['title']);
    assert.equal((await server.admin('GET', '/api/collections/kept_titles/records')).status, 200);
  });

  test('deleteMissing removes the other collections, keeping system ones and the tables', async () => {
    const res = await put({ deleteMissing: true, collections: [{ name: 'kept', fields: [{ name: 'title', type: 'text' }] }] });
    assert.equal(res.status, 204, res.text);
    const left = await names();
    assert.ok(left.includes('kept'));
    assert.ok(!left.includes('dropped'));
    assert.ok(left.includes('users'), 'the system users collection stays');
    assert.ok(left.includes('_externalAuths'));
  });
});
