import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createCollection, startServer, type TestServer } from '../helpers/server.ts';

// PocketBase ≥ 0.23 has no system `created`/`updated`: they are `autodate` fields a collection has
// when its fields list them. A client that signs in as that generation's (through `_superusers`)
// and creates a collection gets what PocketBase would make; the v0.22 sign-in and `schema` keep both
// dates, as every v0.22 collection (and the specification's) has them.
describe('created and updated of collections made through the API', () => {
  let server: TestServer;
  let superuser = '';
  before(async () => {
    server = await startServer();
    const login = await server.request('POST', '/api/collections/_superusers/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200, login.text);
    superuser = login.body.token;
  });
  after(() => server.close());

  const asSuperuser = (method: string, path: string, body?: unknown) => server.request(method, path, { token: superuser, body });
  const names = (fields: Array<{ name: string }>) => fields.map((f) => f.name);

  test('a list without dates gives a collection without them, its id field put first', async () => {
    const res = await asSuperuser('POST', '/api/collections', { name: 'notes', type: 'base', fields: [{ type: 'text', id: 'text_title', name: 'title' }] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(names(res.body.fields), ['id', 'title']);
    assert.equal(res.body.fields[0].id, 'text3208210256');
    assert.equal(res.body.fields[0].primaryKey, true);
    const again = await asSuperuser('GET', '/api/collections/notes');
    assert.deepEqual(names(again.body.fields), ['id', 'title']);

    const made = await asSuperuser('POST', '/api/collections/notes/records', { title: 'first' });
    assert.equal(made.status, 200, made.text);
    assert.deepEqual(Object.keys(made.body), ['collectionId', 'collectionName', 'id', 'title']);
    const read = await asSuperuser('GET', `/api/collections/notes/records/${made.body.id}`);
    assert.deepEqual(Object.keys(read.body), ['collectionId', 'collectionName', 'id', 'title']);
    // The column is still there: sorting and filtering by it keep working.
    const listed = await asSuperuser('GET', `/api/collections/notes/records?sort=-created&filter=${encodeURIComponent("created != ''")}`);
    assert.equal(listed.status, 200, listed.text);
    assert.deepEqual(listed.body.items.map((r: { title: string }) => r.title), ['first']);
    assert.equal(listed.body.items[0].created, undefined);
  });

  test('an empty list gives the id field only', async () => {
    const res = await asSuperuser('POST', '/api/collections', { name: 'empties', fields: [] });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(names(res.body.fields), ['id']);
    assert.deepEqual(res.body.schema, []);
  });

  test('dates listed as autodate fields are had, where they were listed', async () => {
    const fields = [
      { name: 'title', type: 'text' },
      { name: 'created', type: 'autodate', onCreate: true, onUpdate: false },
    ];
    const res = await asSuperuser('POST', '/api/collections', { name: 'stamped', fields });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(names(res.body.fields), ['id', 'title', 'created']);
    assert.equal(res.body.fields[2].type, 'autodate');
    const made = await asSuperuser('POST', '/api/collections/stamped/records', { title: 'x' });
    assert.deepEqual(Object.keys(made.body), ['collectionId', 'collectionName', 'created', 'id', 'title']);
    assert.match(made.body.created, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test("an auth collection gets PocketBase's auth fields after the sent ones, one sent kept in its place", async () => {
    const fields = [{ name: 'nickname', type: 'text' }, { name: 'tokenKey', type: 'text', hidden: true }, { name: 'bio', type: 'text' }];
    const res = await asSuperuser('POST', '/api/collections', { name: 'players', type: 'auth', fields });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(names(res.body.fields), ['id', 'nickname', 'tokenKey', 'bio', 'password', 'email', 'emailVisibility', 'verified']);
    const made = await asSuperuser('POST', '/api/collections/players/records', { nickname: 'n', email: 'p@example.com', password: 'player-pass-1', passwordConfirm: 'player-pass-1' });
    assert.equal(made.status, 200, made.text);
    assert.deepEqual(Object.keys(made.body), ['bio', 'collectionId', 'collectionName', 'email', 'emailVisibility', 'id', 'nickname', 'verified']);
  });

  test('a system field sent with the list keeps its own values under the id and flags PocketBase gives it', async () => {
    const fields = [{ type: 'text', name: 'tokenKey', system: false, required: false, min: 10 }];
    const res = await asSuperuser('POST', '/api/collections', { name: 'keyed', type: 'auth', fields });
    assert.equal(res.status, 200, res.text);
    const tokenKey = res.body.fields.find((f: { name: string }) => f.name === 'tokenKey');
    assert.deepEqual(tokenKey, {
      autogeneratePattern: '', help: '', hidden: true, id: 'text2504183744', max: 0, min: 10, name: 'tokenKey',
      pattern: '', presentable: false, primaryKey: false, required: true, system: true, type: 'text',
    });
  });

  test('the v0.22 sign-in, and a v0.22 schema from either, keep both dates', async () => {
    const own = await createCollection(server, { name: 'legacy_admin', fields: [{ name: 'title', type: 'text' }] });
    assert.deepEqual(names(own.fields), ['id', 'title', 'created', 'updated']);
    const schema = await asSuperuser('POST', '/api/collections', { name: 'legacy_schema', schema: [{ name: 'title', type: 'text', options: {} }] });
    assert.equal(schema.status, 200, schema.text);
    assert.deepEqual(names(schema.body.fields), ['id', 'title', 'created', 'updated']);
    for (const name of ['legacy_admin', 'legacy_schema']) {
      const made = await server.admin('POST', `/api/collections/${name}/records`, { body: { title: 't' } });
      assert.deepEqual(Object.keys(made.body), ['collectionId', 'collectionName', 'created', 'id', 'title', 'updated'], name);
    }
  });

  test('a list that adds a field later keeps the collection without dates', async () => {
    const res = await asSuperuser('GET', '/api/collections/notes');
    const fields = [...res.body.fields, { name: 'body', type: 'editor' }];
    const changed = await asSuperuser('PATCH', '/api/collections/notes', { fields });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(names(changed.body.fields), ['id', 'title', 'body']);
    const made = await asSuperuser('POST', '/api/collections/notes/records', { title: 'second', body: '<p>b</p>' });
    assert.deepEqual(Object.keys(made.body), ['body', 'collectionId', 'collectionName', 'id', 'title']);
  });
});
