import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

// A view reading another view: PostgreSQL refuses to drop the one read while the reader exists,
// SQLite drops it and leaves the reader broken. Either way an import or a delete answers 204 or a
// 400 naming both views, never a 500, and no view is left broken.
describe('views reading views, dropped by an import or a delete', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'source', fields: [{ name: 'title', type: 'text' }] });
    await server.admin('POST', '/api/collections/source/records', { body: { title: 'one' } });
  });
  after(() => server.close());

  const put = (body: unknown) => server.request('PUT', '/api/collections/import', { body, token: server.adminToken });
  const names = async () => (await server.admin('GET', '/api/collections?perPage=200')).body.items.map((c: { name: string }) => c.name) as string[];
  const exported = async (name: string) => (await server.admin('GET', `/api/collections/${name}`)).body;
  const makeViews = async () => {
    await createCollection(server, { name: 'view1', type: 'view', viewQuery: 'SELECT id, title FROM source' });
    await createCollection(server, { name: 'view2', type: 'view', viewQuery: 'SELECT id, title FROM view1' });
  };
  const readable = async (name: string) => {
    const res = await server.admin('GET', `/api/collections/${name}/records`);
    assert.equal(res.status, 200, `${name}: ${res.text}`);
    assert.deepEqual(res.body.items.map((r: { title: string }) => r.title), ['one']);
  };

  test('deleteMissing leaving out the view read by a kept view: 400 naming both, nothing changed', async () => {
    await makeViews();
    const res = await put({ deleteMissing: true, collections: [await exported('source'), await exported('view2')] });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.message, 'Failed to import collections.');
    assert.equal(res.body.data.collections.code, 'validation_collections_import_failure');
    assert.match(res.body.data.collections.message, /view2/);
    assert.match(res.body.data.collections.message, /view1/);
    const left = await names();
    assert.ok(left.includes('view1') && left.includes('view2'));
    await readable('view1');
    await readable('view2');
  });

  test("an import changing the query of a view another reads keeps the reader working", async () => {
    const view1 = await exported('view1');
    const res = await put({ collections: [{ ...view1, viewQuery: "SELECT id, title, 'x' AS extra FROM source", options: undefined }] });
    assert.equal(res.status, 204, res.text);
    assert.deepEqual((await exported('view1')).fields.filter((f: { system?: boolean }) => !f.system).map((f: { name: string }) => f.name), ['title', 'extra']);
    await readable('view2');
  });

  test('deleteMissing leaving out both views drops them, the reader first', async () => {
    const res = await put({ deleteMissing: true, collections: [await exported('source')] });
    assert.equal(res.status, 204, res.text);
    const left = await names();
    assert.ok(!left.includes('view1') && !left.includes('view2'));
    await readable('source');
  });

  test('DELETE of a view another reads is the soft drop: the reader keeps working', async () => {
    await makeViews();
    const res = await server.admin('DELETE', '/api/collections/view1');
    assert.equal(res.status, 204, res.text);
    assert.ok(!(await names()).includes('view1'));
    await readable('view2');
  });

  test('re-creating the deleted view, then changing its query, keeps its reader working', async () => {
    const made = await server.admin('POST', '/api/collections', { body: { name: 'view1', type: 'view', viewQuery: 'SELECT id, title FROM source' } });
    assert.equal(made.status, 200, made.text);
    await readable('view2');
    const changed = await server.admin('PATCH', '/api/collections/view1', { body: { viewQuery: "SELECT id, title, 'y' AS other FROM source" } });
    assert.equal(changed.status, 200, changed.text);
    await readable('view1');
    await readable('view2');
  });
});
