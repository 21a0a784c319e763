import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { columnsOf as tableColumns, databaseOf } from '../helpers/inspect.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

/** Physical columns of a table in the main database, read from storage past Cairn's metadata. */
async function columnsOf(server: TestServer, table: string): Promise<string[]> {
  return tableColumns(await databaseOf(server), table);
}

const TRIGGER = { action: 'create', url: 'http://127.0.0.1:9/hooks/new', method: 'POST' };

describe('collections API', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('collections are for administrators only', async () => {
    assert.equal((await server.request('GET', '/api/collections')).status, 401);
    assert.equal((await server.request('POST', '/api/collections', { body: { name: 'x' } })).status, 401);
    assert.equal((await server.request('GET', '/api/collections/users')).status, 401);
    assert.equal((await server.request('PATCH', '/api/collections/users', { body: {} })).status, 401);
    assert.equal((await server.request('DELETE', '/api/collections/users')).status, 401);
  });

  test('every database starts with the users auth collection', async () => {
    const res = await server.admin('GET', '/api/collections/users');
    assert.equal(res.status, 200);
    assert.equal(res.body.type, 'auth');
    assert.equal(res.body.system, true);
    // PocketBase's default users (avatar a file field) plus the specification's role (API contract §2).
    assert.deepEqual(
      res.body.schema.map((f: any) => [f.name, f.type]),
      [
        ['name', 'text'],
        ['avatar', 'file'],
        ['role', 'text'],
      ],
    );
    assert.deepEqual(
      res.body.fields.map((f: any) => [f.name, f.type, f.system]),
      [
        ['id', 'text', true],
        ['password', 'password', true],
        ['tokenKey', 'text', true],
        ['email', 'email', true],
        ['emailVisibility', 'bool', true],
        ['verified', 'bool', true],
        ['name', 'text', false],
        ['avatar', 'file', false],
        ['role', 'text', false],
        ['created', 'autodate', false],
        ['updated', 'autodate', false],
      ],
    );
    assert.equal(res.body.deleteRule, res.body.updateRule, 'a user may delete their own account');
    const avatar = res.body.fields.find((f: any) => f.name === 'avatar');
    assert.equal(avatar.maxSelect, 1);
    assert.equal(avatar.maxSize, 0);
    assert.deepEqual(avatar.mimeTypes, ['image/jpeg', 'image/png', 'image/svg+xml', 'image/gif', 'image/webp']);
    for (const column of ['email', 'emailVisibility', 'verified', 'passwordHash', 'tokenKey']) assert.ok((await columnsOf(server, 'users')).includes(column), column);
  });

  test('create answers 200 with the collection; fields lists the system fields, schema the own ones', async () => {
    const res = await server.admin('POST', '/api/collections', {
      body: { name: 'posts', type: 'base', fields: [{ name: 'title', type: 'text', required: true }], listRule: '', viewRule: null },
    });
    assert.equal(res.status, 200);
    const c = res.body;
    assert.match(c.id, /^[a-z0-9]{15}$/);
    assert.equal(c.name, 'posts');
    assert.equal(c.type, 'base');
    assert.equal(c.system, false);
    assert.deepEqual(
      c.fields.map((f: any) => [f.name, f.type]),
      [
        ['id', 'text'],
        ['title', 'text'],
        ['created', 'autodate'],
        ['updated', 'autodate'],
      ],
    );
    assert.deepEqual(c.schema.map((f: any) => f.name), ['title']);
    assert.equal(c.fields[1].required, true);
    assert.equal(c.schema[0].required, true);
    assert.match(c.fields[1].id, /\S/);
    assert.equal(c.fields[1].id, c.schema[0].id);
    assert.deepEqual(c.options, {});
    assert.equal(c.listRule, '');
    assert.equal(c.viewRule, null);
    assert.equal(c.createRule, null);
    assert.deepEqual(c.indexes, []);
    assert.match(c.created, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.deepEqual(await columnsOf(server, 'posts'), ['id', 'created', 'updated', 'title']);
  });

  test('a create body may name its fields `schema` (the spec form)', async () => {
    const c = await createCollection(server, { name: 'tags', schema: [{ name: 'label', type: 'text' }] });
    assert.deepEqual(
      c.schema.map((f: any) => f.name),
      ['label'],
    );
    assert.deepEqual(
      c.fields.map((f: any) => f.name),
      ['id', 'label', 'created', 'updated'],
    );
  });

  test('options as an object or a JSON string, triggers kept, returned as an object', async () => {
    const asObject = await createCollection(server, { name: 'with_obj', options: { triggers: [TRIGGER] } });
    assert.deepEqual(asObject.options.triggers, [TRIGGER]);
    const asString = await createCollection(server, { name: 'with_str', options: JSON.stringify({ triggers: [TRIGGER] }) });
    assert.deepEqual(asString.options.triggers, [TRIGGER]);
    const read = await server.admin('GET', '/api/collections/with_str');
    assert.deepEqual(read.body.options.triggers, [TRIGGER]);

    const bad = await server.admin('POST', '/api/collections', { body: { name: 'bad_opts', options: '{"triggers": [' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.data.options.code, 'validation_invalid_json');
    const notObject = await server.admin('POST', '/api/collections', { body: { name: 'bad_opts', options: '[1,2]' } });
    assert.equal(notObject.status, 400);
    assert.equal((await server.admin('GET', '/api/collections/bad_opts')).status, 404);
  });

  test('PATCH with options keeps triggers and other collection properties', async () => {
    const res = await server.admin('PATCH', '/api/collections/with_obj', { body: { options: JSON.stringify({ triggers: [TRIGGER, { ...TRIGGER, action: 'update' }] }) } });
    assert.equal(res.status, 200);
    assert.equal(res.body.options.triggers.length, 2);
    const untouched = await server.admin('PATCH', '/api/collections/with_obj', { body: { listRule: '' } });
    assert.equal(untouched.body.options.triggers.length, 2);
    assert.equal(untouched.body.listRule, '');
  });

  test('list, view by name and by id', async () => {
    const list = await server.admin('GET', '/api/collections?perPage=2');
    assert.equal(list.status, 200);
    assert.equal(list.body.perPage, 2);
    assert.equal(list.body.items.length, 2);
    assert.ok(list.body.totalItems >= 5);
    const all = await server.admin('GET', '/api/collections?perPage=500');
    const posts = all.body.items.find((c: any) => c.name === 'posts');
    assert.ok(posts);
    const byId = await server.admin('GET', `/api/collections/${posts.id}`);
    assert.equal(byId.body.name, 'posts');
    const auth = await server.admin('GET', '/api/collections?type=auth&perPage=500');
    assert.ok(auth.body.items.every((c: any) => c.type === 'auth'));
    assert.equal((await server.admin('GET', '/api/collections/nope')).status, 404);
  });

  test("a duplicate name is PocketBase's 400, whatever its case", async () => {
    for (const name of ['posts', 'POSTS']) {
      const res = await server.admin('POST', '/api/collections', { body: { name } });
      assert.equal(res.status, 400, name);
      assert.equal(res.body.code, 400);
      assert.equal(res.body.data.name.code, 'validation_collection_name_exists');
    }
  });

  test('invalid definitions are 400 with per-property errors', async () => {
    // Under `fields` (PocketBase ≥ 0.23) a field's position counts the `id` field first, sent or not;
    // under `schema` (v0.22) it is the position in the list as sent.
    const cases: Array<[Record<string, unknown>, (data: any) => void]> = [
      [{ name: '_bad' }, (d) => assert.equal(d.name.code, 'validation_invalid_name')],
      [{ name: 'x'.repeat(64) }, (d) => assert.equal(d.name.code, 'validation_invalid_name')],
      [{ name: 'x_id', id: 'bad id' }, (d) => assert.equal(d.id.code, 'validation_invalid_or_existing_id')],
      [{ name: 'bad name' }, (d) => assert.equal(d.name.code, 'validation_invalid_name')],
      [{ name: 'x_type', type: 'table' }, (d) => assert.equal(d.type.code, 'validation_in_invalid')],
      [{ name: 'x_ft', fields: [{ name: 'a', type: 'bogus' }] }, (d) => assert.equal(d.fields[1].type.code, 'validation_invalid_type')],
      [{ name: 'x_ft2', schema: [{ name: 'a', type: 'bogus' }] }, (d) => assert.equal(d.schema[0].type.code, 'validation_invalid_type')],
      [{ name: 'x_ft3', fields: [{ name: 'id', type: 'text', system: true }, { name: 'a', type: 'bogus' }] }, (d) => assert.equal(d.fields[1].type.code, 'validation_invalid_type')],
      [{ name: 'x_res', fields: [{ name: 'id', type: 'number' }] }, (d) => assert.equal(d.fields.code, 'validation_system_field_change')],
      [{ name: 'x_res2', fields: [{ name: 'created', type: 'text' }] }, (d) => assert.equal(d.fields.code, 'validation_system_field_change')],
      [{ name: 'x_res3', fields: [{ name: 'rowid', type: 'text' }] }, (d) => assert.equal(d.fields[1].name.code, 'validation_reserved_name')],
      // PostgreSQL's system columns, refused on both drivers.
      [{ name: 'x_res4', fields: [{ name: 'title', type: 'text' }, { name: 'ctid', type: 'text' }] }, (d) => assert.equal(d.fields[2].name.code, 'validation_reserved_name')],
      [{ name: 'x_res5', fields: [{ name: 'XMin', type: 'number' }] }, (d) => assert.equal(d.fields[1].name.code, 'validation_reserved_name')],
      [{ name: 'x_keys', fields: [{ name: 'expand', type: 'text' }, { name: 'collectionName', type: 'text' }] }, (d) => assert.equal(d.fields[2].name.code, 'validation_not_in_invalid')],
      [{ name: 'x_dup', fields: [{ name: 'a', type: 'text' }, { name: 'A', type: 'text' }] }, (d) => assert.equal(d.fields[2].name.code, 'validation_duplicated_name')],
      [{ name: 'x_fields', fields: 'title' }, (d) => assert.equal(d.fields.code, 'validation_invalid_fields')],
      [{ name: 'x_rule', listRule: 'title = ' }, (d) => assert.equal(d.listRule.code, 'validation_invalid_rule')],
      [{ name: 'x_rule2', listRule: 42 }, (d) => assert.equal(d.listRule.code, 'validation_invalid_rule')],
      [{ name: 'x_idx', indexes: ['DROP TABLE posts'] }, (d) => assert.equal(d.indexes[0].code, 'validation_invalid_index_expression')],
      [{ name: 'x_idx2', indexes: ['CREATE INDEX _x_idx2_created_idx ON x_idx2 (created)'] }, (d) => assert.equal(d.indexes[0].code, 'validation_invalid_index_expression')],
      [{ name: 'x_idx3', indexes: ['CREATE INDEX i ON x_idx3 (created)', 'CREATE INDEX i2 ON x_idx3 ((SELECT 1))'] }, (d) => assert.equal(d.indexes[1].code, 'validation_invalid_index_expression')],
      [{ name: 'x_idx4', indexes: ['CREATE INDEX twice ON x_idx4 (created)', 'CREATE INDEX TWICE ON x_idx4 (updated)'] }, (d) => assert.equal(d.indexes[1].code, 'validation_duplicated_index_name')],
      [{ name: 'sqlite_master' }, (d) => assert.equal(d.name.code, 'validation_reserved_name')],
      [{ name: 'SQLite_stat1' }, (d) => assert.equal(d.name.code, 'validation_reserved_name')],
      [{ name: 'pg_class' }, (d) => assert.equal(d.name.code, 'validation_reserved_name')],
      [{ name: 'PG_stats' }, (d) => assert.equal(d.name.code, 'validation_reserved_name')],
    ];
    for (const [body, check] of cases) {
      const res = await server.admin('POST', '/api/collections', { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 400);
      check(res.body.data);
    }
    const body = await server.admin('POST', '/api/collections', { body: [] });
    assert.equal(body.status, 400);
  });

  test('the five rules are stored as given', async () => {
    const rules = { listRule: '', viewRule: 'title != ""', createRule: null, updateRule: 'id = @request.auth.id', deleteRule: null };
    const c = await createCollection(server, { name: 'ruled', fields: [{ name: 'title', type: 'text' }], ...rules });
    for (const [k, v] of Object.entries(rules)) assert.equal(c[k], v, k);
    const read = await server.admin('GET', '/api/collections/ruled');
    for (const [k, v] of Object.entries(rules)) assert.equal(read.body[k], v, k);
  });

  test('renaming a collection is refused with a clear 400', async () => {
    const res = await server.admin('PATCH', '/api/collections/posts', { body: { name: 'articles' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.name.code, 'validation_collection_rename');
    assert.match(res.body.data.name.message, /not supported/);
    assert.equal((await server.admin('GET', '/api/collections/posts')).status, 200);
    assert.equal((await server.admin('GET', '/api/collections/articles')).status, 404);
    const type = await server.admin('PATCH', '/api/collections/posts', { body: { type: 'auth' } });
    assert.equal(type.status, 400);
    assert.equal(type.body.data.type.code, 'validation_collection_type_change');
  });

  test('renaming a field is refused with a clear 400; changing its type too', async () => {
    const posts = (await server.admin('GET', '/api/collections/posts')).body;
    const title = posts.fields.find((f: any) => f.name === 'title');
    const rename = await server.admin('PATCH', '/api/collections/posts', { body: { schema: [{ ...title, name: 'headline' }] } });
    assert.equal(rename.status, 400);
    assert.equal(rename.body.data.schema[0].name.code, 'validation_field_rename');
    assert.match(rename.body.data.schema[0].name.message, /append-only/);
    const retype = await server.admin('PATCH', '/api/collections/posts', { body: { fields: [{ ...title, type: 'number' }] } });
    assert.equal(retype.status, 400);
    assert.equal(retype.body.data.fields[1].type.code, 'validation_field_type_change', 'after the id field PocketBase counts first');
    assert.deepEqual(await columnsOf(server, 'posts'), ['id', 'created', 'updated', 'title']);
  });

  test('adding a field adds its column; removing it keeps the column and the data', async () => {
    const posts = (await server.admin('GET', '/api/collections/posts')).body;
    const added = await server.admin('PATCH', '/api/collections/posts', { body: { fields: [...posts.fields, { name: 'summary', type: 'text' }] } });
    assert.equal(added.status, 200);
    assert.deepEqual(await columnsOf(server, 'posts'), ['id', 'created', 'updated', 'title', 'summary']);
    const rec = await server.admin('POST', '/api/collections/posts/records', { body: { title: 'kept', summary: 'survives removal' } });
    assert.equal(rec.status, 200);

    const removed = await server.admin('PATCH', '/api/collections/posts', { body: { fields: posts.fields } });
    assert.equal(removed.status, 200);
    assert.deepEqual(
      removed.body.schema.map((f: any) => f.name),
      ['title'],
    );
    assert.ok((await columnsOf(server, 'posts')).includes('summary'), 'the column stays');
    const view = await server.admin('GET', `/api/collections/posts/records/${rec.body.id}`);
    assert.equal(view.body.summary, undefined, 'no longer part of the record');

    const readded = await server.admin('PATCH', '/api/collections/posts', { body: { fields: [...posts.fields, { name: 'summary', type: 'text' }] } });
    assert.equal(readded.status, 200);
    const back = await server.admin('GET', `/api/collections/posts/records/${rec.body.id}`);
    assert.equal(back.body.summary, 'survives removal');
  });

  test('DELETE is a soft drop: 204, metadata gone, table and data kept; re-creating adopts them', async () => {
    await createCollection(server, { name: 'drafts', fields: [{ name: 'body', type: 'text' }, { name: 'n', type: 'number' }] });
    const rec = await server.admin('POST', '/api/collections/drafts/records', { body: { body: 'old data', n: 7 } });
    assert.equal(rec.status, 200);

    const del = await server.admin('DELETE', '/api/collections/drafts');
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.equal((await server.admin('GET', '/api/collections/drafts')).status, 404);
    assert.equal((await server.admin('GET', '/api/collections/drafts/records')).status, 404);
    assert.deepEqual(await columnsOf(server, 'drafts'), ['id', 'created', 'updated', 'body', 'n']);

    // Re-created with one of the old fields and a new one: the old row is there, the old column too.
    const again = await server.admin('POST', '/api/collections', { body: { name: 'drafts', fields: [{ name: 'body', type: 'text' }, { name: 'extra', type: 'bool' }] } });
    assert.equal(again.status, 200);
    const list = await server.admin('GET', '/api/collections/drafts/records');
    assert.equal(list.body.totalItems, 1);
    assert.equal(list.body.items[0].id, rec.body.id);
    assert.equal(list.body.items[0].body, 'old data');
    assert.equal(list.body.items[0].extra, false);
    assert.deepEqual(await columnsOf(server, 'drafts'), ['id', 'created', 'updated', 'body', 'n', 'extra']);
  });

  test('system collections and collections still referenced by relations cannot be dropped', async () => {
    const sys = await server.admin('DELETE', '/api/collections/users');
    assert.equal(sys.status, 400);
    await createCollection(server, { name: 'authors', fields: [{ name: 'name', type: 'text' }] });
    await createCollection(server, { name: 'books', fields: [{ name: 'author', type: 'relation', options: { toCollection: 'authors' } }] });
    const referenced = await server.admin('DELETE', '/api/collections/authors');
    assert.equal(referenced.status, 400);
    assert.match(referenced.body.message, /books/);
    assert.equal((await server.admin('DELETE', '/api/collections/nope')).status, 404);
  });

  test('an index can be added and a unique field refuses existing duplicates', async () => {
    await createCollection(server, { name: 'dupes', fields: [{ name: 'code', type: 'text' }] });
    for (let i = 0; i < 2; i++) assert.equal((await server.admin('POST', '/api/collections/dupes/records', { body: { code: 'same' } })).status, 200);
    const c = (await server.admin('GET', '/api/collections/dupes')).body;
    const unique = await server.admin('PATCH', '/api/collections/dupes', { body: { schema: [{ ...c.schema[0], unique: true }] } });
    assert.equal(unique.status, 400);
    assert.equal(unique.body.data.code.code, 'validation_not_unique');
    assert.equal((await server.admin('GET', '/api/collections/dupes')).body.schema[0].unique, false, 'nothing half-applied');

    const indexed = await server.admin('PATCH', '/api/collections/dupes', { body: { indexes: ['CREATE INDEX idx_dupes_code ON dupes (code)'] } });
    assert.equal(indexed.status, 200);
    assert.deepEqual(indexed.body.indexes, ['CREATE INDEX idx_dupes_code ON dupes (code)']);
  });
});
