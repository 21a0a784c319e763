import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_EMAIL, createCollection, startServer, type TestServer } from '../helpers/server.ts';

// The collections API as PocketBase v0.39 answers it where the contract leaves it open (§19): field
// names, system fields sent back, index statements, view collections, error codes and their places.
describe('collections API: PocketBase v0.39 behaviours', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'books', fields: [{ name: 'title', type: 'text' }, { name: 'pages', type: 'number' }] });
    for (const [title, pages] of [['Dune', 412], ['Emma', 474]] as const) {
      assert.equal((await server.admin('POST', '/api/collections/books/records', { body: { title, pages } })).status, 200);
    }
  });
  after(() => server.close());

  const create = (body: unknown) => server.admin('POST', '/api/collections', { body });
  const update = (name: string, body: unknown) => server.admin('PATCH', `/api/collections/${name}`, { body });

  test('a base collection may name its fields like the auth columns; the values are ordinary ones', async () => {
    const names = ['email', 'verified', 'emailVisibility', 'password', 'passwordConfirm', 'oldPassword', 'tokenKey', 'passwordHash', 'lastResetSentAt'];
    const res = await create({ name: 'contacts', type: 'base', fields: names.map((name) => ({ name, type: 'text' })) });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.schema.map((f: { name: string }) => f.name), names);
    const values = Object.fromEntries(names.map((n) => [n, `value of ${n}`]));
    const record = await server.admin('POST', '/api/collections/contacts/records', { body: values });
    assert.equal(record.status, 200, record.text);
    const read = await server.admin('GET', `/api/collections/contacts/records/${record.body.id}`);
    for (const n of names) assert.equal(read.body[n], values[n], n);
  });

  test('an auth collection keeps the names of its forms and columns, counted after the id field', async () => {
    const fields = [{ type: 'text', name: 'nickname' }, { type: 'text', name: 'oldPassword' }, { type: 'text', name: 'passwordConfirm' }];
    const res = await create({ name: 'members', type: 'auth', fields });
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.body.data.fields), ['2', '3']);
    assert.equal(res.body.data.fields[2].name.code, 'validation_reserved_field_name');
    assert.equal(res.body.data.fields[3].name.code, 'validation_reserved_field_name');
    // Sent with the id field, or as v0.22's schema, positions are those of the list as sent.
    const withId = await create({ name: 'members', type: 'auth', fields: [{ name: 'id', type: 'text', system: true }, ...fields] });
    assert.deepEqual(Object.keys(withId.body.data.fields), ['2', '3']);
    const schema = await create({ name: 'members', type: 'auth', schema: fields });
    assert.deepEqual(Object.keys(schema.body.data.schema), ['1', '2']);
    assert.equal((await server.admin('GET', '/api/collections/members')).status, 404);
  });

  test('system fields sent back are passed over; one of another type is a system field change', async () => {
    const echoed = await create({
      name: 'accounts',
      type: 'auth',
      fields: [
        { name: 'id', type: 'text', system: true, primaryKey: true },
        { name: 'password', type: 'password', system: true, hidden: true },
        { name: 'tokenKey', type: 'text', system: true, hidden: true, min: 10 },
        { name: 'email', type: 'email', system: true },
        { name: 'emailVisibility', type: 'bool', system: true },
        { name: 'verified', type: 'bool', system: true },
        { name: 'handle', type: 'text' },
        { name: 'created', type: 'autodate', onCreate: true },
        { name: 'updated', type: 'autodate', onCreate: true, onUpdate: true },
      ],
    });
    assert.equal(echoed.status, 200, echoed.text);
    assert.deepEqual(echoed.body.schema.map((f: { name: string }) => f.name), ['handle']);

    const replaced = await update('books', { fields: [{ name: 'title', type: 'text' }, { name: 'created', type: 'text' }] });
    assert.equal(replaced.status, 400);
    assert.equal(replaced.body.data.fields.code, 'validation_system_field_change');
    // Errors of the fields themselves come first; keys are in order, fields before name.
    const both = await update('books', { name: 'tomes', fields: [{ name: 'created', type: 'text' }, { name: 'expand', type: 'text' }] });
    assert.equal(both.status, 400);
    assert.deepEqual(Object.keys(both.body.data), ['fields', 'name']);
    assert.deepEqual(Object.keys(both.body.data.fields), ['2']);
    assert.equal(both.body.data.fields[2].name.code, 'validation_not_in_invalid');
    assert.equal(both.body.data.name.code, 'validation_collection_rename');
  });

  test('a name taken by another collection, and a type change, have their own codes', async () => {
    const res = await update('books', { name: 'contacts', type: 'auth' });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.name.code, 'validation_collection_name_exists');
    assert.equal(res.body.data.type.code, 'validation_collection_type_change');
    // Creating under a taken name is PocketBase's 400 (API contract §3), with the other errors beside it.
    const dup = await create({ name: 'books', fields: [{ type: 'text', name: '' }] });
    assert.equal(dup.status, 400);
    assert.equal(dup.body.data.name.code, 'validation_collection_name_exists');
    assert.equal(dup.body.data.fields[1].name.code, 'validation_required');
  });

  test('indexes: always on the collection, names unique, errors at their positions', async () => {
    const made = await create({
      name: 'shelves',
      fields: [{ name: 'code', type: 'text' }],
      indexes: ['CREATE UNIQUE INDEX idx_shelves_code ON somewhere_else (code)'],
    });
    assert.equal(made.status, 200, made.text);
    assert.match(made.body.indexes[0], /ON shelves \(code\)/);
    assert.equal((await server.admin('POST', '/api/collections/shelves/records', { body: { code: 'A1' } })).status, 200);
    assert.equal((await server.admin('POST', '/api/collections/shelves/records', { body: { code: 'A1' } })).status, 400, 'the unique index is on shelves');

    const twice = await update('books', { indexes: ['CREATE INDEX idx_twice ON books (title)', 'CREATE INDEX idx_twice ON books (pages)'] });
    assert.equal(twice.status, 400);
    assert.equal(twice.body.data.indexes[1].code, 'validation_duplicated_index_name');
    const taken = await update('books', { indexes: ['CREATE INDEX idx_shelves_code ON books (title)'] });
    assert.equal(taken.status, 400);
    assert.equal(taken.body.data.indexes[0].code, 'validation_existing_index_name');
    const missing = await update('books', { indexes: ['CREATE INDEX idx_books_title ON books (title)', 'CREATE INDEX idx_books_nope ON books (nope)'] });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.data.indexes[1].code, 'validation_invalid_index_expression');
    assert.deepEqual((await server.admin('GET', '/api/collections/books')).body.indexes, [], 'nothing half-applied');
  });

  test('view collections are created, changed and checked through the API', async () => {
    const made = await create({
      name: 'long_books',
      type: 'view',
      fields: [{ name: 'ignored!', type: 'text' }],
      viewQuery: 'SELECT id, title, pages FROM books WHERE pages > 450',
      listRule: '',
    });
    assert.equal(made.status, 200, made.text);
    assert.equal(made.body.type, 'view');
    assert.equal(made.body.viewQuery, 'SELECT id, title, pages FROM books WHERE pages > 450');
    assert.deepEqual(made.body.schema.map((f: { name: string }) => f.name), ['title', 'pages']);
    const list = await server.request('GET', '/api/collections/long_books/records');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.items.map((r: { title: string }) => r.title), ['Emma']);

    const changed = await update('long_books', { viewQuery: 'SELECT id, title FROM books', fields: [] });
    assert.equal(changed.status, 200, changed.text);
    assert.deepEqual(changed.body.schema.map((f: { name: string }) => f.name), ['title']);
    assert.equal((await server.request('GET', '/api/collections/long_books/records')).body.totalItems, 2);
    // A query ending in a `--` comment (the view is made around it: it has no created or updated).
    const commented = 'SELECT id, title FROM books -- every book';
    const dry = await server.admin('POST', '/api/collections/meta/dry-run-view', { body: { query: commented } });
    assert.equal(dry.status, 200, dry.text);
    const withComment = await create({ name: 'commented_books', type: 'view', viewQuery: commented, listRule: '' });
    assert.equal(withComment.status, 200, withComment.text);
    assert.equal((await server.request('GET', '/api/collections/commented_books/records')).body.totalItems, 2);
    // A query that fails as it runs (an integer overflow on both engines) is the view's 400, not a 500.
    const failing = await create({ name: 'overflowing', type: 'view', viewQuery: 'SELECT id, abs(-9223372036854775807 - 1) AS n FROM books', listRule: '', viewRule: '' });
    assert.equal(failing.status, 200, failing.text);
    const failedDry = await server.admin('POST', '/api/collections/meta/dry-run-view', { body: { query: 'SELECT id, abs(-9223372036854775807 - 1) AS n FROM books' } });
    assert.equal(failedDry.status, 400, failedDry.text);
    const failedList = await server.request('GET', '/api/collections/overflowing/records');
    assert.equal(failedList.status, 400, failedList.text);
    assert.match(failedList.body.message, /query of view "overflowing" failed/);
    const bookId = (await server.request('GET', '/api/collections/long_books/records')).body.items[0].id;
    assert.equal((await server.request('GET', `/api/collections/overflowing/records/${bookId}`)).status, 400);
    // A view has no rowid: `@rowid` sorts by its id, as its list does when nothing else decides.
    for (const [sort, reversed] of [['@rowid', false], ['-@rowid', true]] as const) {
      const sorted = await server.request('GET', `/api/collections/long_books/records?sort=${encodeURIComponent(sort)}`);
      assert.equal(sorted.status, 200, sorted.text);
      const ids = sorted.body.items.map((r: { id: string }) => r.id);
      const ascending = [...ids].sort();
      assert.deepEqual(ids, reversed ? ascending.reverse() : ascending, sort);
    }

    for (const [body, key, code] of [
      [{ viewQuery: 'SELECT 1 AS abc' }, 'viewQuery', 'validation_invalid_view_query'],
      [{ viewQuery: 'not sql at all' }, 'viewQuery', 'validation_invalid_view_query'],
      [{ viewQuery: 'SELECT id FROM no_such_table' }, 'viewQuery', 'validation_invalid_view_query'],
      [{ viewQuery: '' }, 'viewQuery', 'validation_required'],
      [{ createRule: '' }, 'createRule', 'validation_nil'],
      [{ indexes: ['CREATE INDEX idx_v ON long_books (title)'] }, 'indexes', 'validation_indexes_not_supported'],
      [{ listRule: 'nope = 1' }, 'listRule', 'validation_invalid_rule'],
      [{ name: 'renamed_view' }, 'name', 'validation_collection_rename'],
    ] as const) {
      const res = await update('long_books', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.data[key]?.code, code, `${JSON.stringify(body)}: ${res.text}`);
    }
    assert.equal((await server.request('GET', '/api/collections/long_books/records')).body.totalItems, 2, 'a refused change leaves the view as it was');

    // v0.22's options.query works as well; a view needs an id column.
    const legacy = await create({ name: 'titles', type: 'view', options: { query: 'SELECT id, title FROM books' } });
    assert.equal(legacy.status, 200, legacy.text);
    assert.equal(legacy.body.options.query, 'SELECT id, title FROM books');
    const noId = await create({ name: 'no_ids', type: 'view', viewQuery: "SELECT '123' AS abc" });
    assert.equal(noId.status, 400);
    assert.equal(noId.body.data.viewQuery.code, 'validation_invalid_view_query');
    assert.equal((await server.admin('GET', '/api/collections/no_ids')).status, 404);

    // A view made through the API is part of the schema migrations describe; applying that
    // migration on this instance changes nothing.
    const gen = await server.admin('GET', '/api/migrations/generate?name=views');
    assert.equal(gen.status, 200, gen.text);
    const views = gen.body.migration.databases.main.collections;
    assert.deepEqual(views.long_books.create_views, [{ name: 'long_books', sql: 'SELECT id, title FROM books' }]);
    const applied = await server.admin('POST', `/api/migrations/${gen.body.version}/apply`);
    assert.equal(applied.status, 200, applied.text);
    assert.equal((await server.request('GET', '/api/collections/long_books/records')).body.totalItems, 2);
    assert.equal((await server.admin('GET', '/api/collections/long_books')).body.listRule, '');
  });

  test("a view may read _superusers, as PocketBase's may: the administrators of the instance, without their secrets", async () => {
    // PocketBase's own scenario: a view of one row of _superusers.
    const one = await create({ name: 'one_superuser', type: 'view', viewQuery: 'select 1 as id from _superusers limit 1' });
    assert.equal(one.status, 200, one.text);
    assert.deepEqual(one.body.fields.map((f: { name: string }) => f.name), ['id']);

    const made = await create({ name: 'staff', type: 'view', viewQuery: 'SELECT id, email, verified, emailVisibility, created, updated FROM _superusers', listRule: '', viewRule: '' });
    assert.equal(made.status, 200, made.text);
    assert.deepEqual(
      made.body.schema.map((f: { name: string; type: string }) => [f.name, f.type]),
      [['email', 'text'], ['verified', 'bool'], ['emailVisibility', 'bool']],
    );
    assert.equal(made.body.viewQuery, 'SELECT id, email, verified, emailVisibility, created, updated FROM _superusers', 'kept as written');
    const emails = async () => ((await server.request('GET', '/api/collections/staff/records?sort=email')).body.items as Array<Record<string, unknown>>);
    const [first] = await emails();
    assert.equal(first.email, ADMIN_EMAIL);
    assert.equal(first.verified, true);
    assert.equal(first.emailVisibility, false);
    assert.equal(typeof first.created, 'string');
    assert.notEqual(first.created, '');
    const record = await server.request('GET', `/api/collections/staff/records/${first.id}`);
    assert.equal(record.status, 200, record.text);

    // Live: an administrator added later is in the view at once; one removed is gone.
    const added = await server.admin('POST', '/api/collections/_superusers/records', { body: { email: 'aaa-second@example.com', password: '1234567890', passwordConfirm: '1234567890' } });
    assert.equal(added.status, 200, added.text);
    assert.deepEqual((await emails()).map((r) => r.email), ['aaa-second@example.com', ADMIN_EMAIL]);
    assert.equal((await server.admin('DELETE', `/api/collections/_superusers/records/${added.body.id}`)).status, 204);
    assert.deepEqual((await emails()).map((r) => r.email), [ADMIN_EMAIL]);

    // `*` is only the public columns; the secrets are not there to select, under any spelling.
    const all = await create({ name: 'all_superusers', type: 'view', viewQuery: 'SELECT * FROM _superusers' });
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(all.body.schema.map((f: { name: string }) => f.name), ['email', 'emailVisibility', 'verified']);
    for (const viewQuery of ['SELECT id, passwordHash FROM _superusers', 'SELECT id, tokenKey FROM _superusers', 'SELECT id, password FROM _superusers', 'SELECT id, email FROM _admins', 'SELECT s.id FROM _superusers s JOIN _api_keys k ON k.id = s.id']) {
      const res = await create({ name: 'secrets', type: 'view', viewQuery });
      assert.equal(res.status, 400, `${viewQuery}: ${res.text}`);
      assert.equal(res.body.data.viewQuery?.code, 'validation_invalid_view_query', viewQuery);
    }

    // The name is read in the SQL, not in its strings; a dry run and a database made later read it too.
    const literal = await server.admin('POST', '/api/collections/meta/dry-run-view', { body: { query: "SELECT id, '_superusers' AS label FROM _superusers" } });
    assert.equal(literal.status, 200, literal.text);
    assert.deepEqual(literal.body.sample.map((r: { label: string }) => r.label), ['_superusers']);
    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'elsewhere' } })).status, 200);
    const there = await server.admin('POST', '/api/collections', { body: { name: 'staff', type: 'view', viewQuery: 'SELECT id, email FROM _superusers', listRule: '' }, db: 'elsewhere' });
    assert.equal(there.status, 200, there.text);
    const rows = await server.request('GET', '/api/collections/staff/records', { db: 'elsewhere' });
    assert.deepEqual(rows.body.items.map((r: { email: string }) => r.email), [ADMIN_EMAIL]);
  });

  test("a view's numeric ids are text, so a record is found by its id", async () => {
    const made = await create({ name: 'numbered', type: 'view', viewQuery: 'SELECT ROW_NUMBER() OVER (ORDER BY title) AS id, title FROM books', listRule: '', viewRule: '' });
    assert.equal(made.status, 200, made.text);
    const list = await server.request('GET', '/api/collections/numbered/records?sort=id');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.items.map((r: { id: unknown; title: string }) => [r.id, r.title]), [['1', 'Dune'], ['2', 'Emma']]);
    const one = await server.request('GET', '/api/collections/numbered/records/2');
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.title, 'Emma');
  });

  test('an identity field that is no field of the collection is validation_missing_field, nested', async () => {
    const res = await update('users', { passwordAuth: { identityFields: ['missing'] } });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.passwordAuth.identityFields.code, 'validation_missing_field');
  });

  test("PocketBase's system collections are the newest, in the order PocketBase creates them", async () => {
    const res = await server.admin('GET', '/api/collections?sort=-created&perPage=100');
    assert.equal(res.status, 200);
    const system = res.body.items.map((c: { name: string }) => c.name).filter((n: string) => n.startsWith('_'));
    assert.deepEqual(system, ['_authOrigins', '_otps', '_mfas', '_externalAuths', '_superusers']);
  });

  test('scaffolds list the system fields of each type, and one sent back creates the collection', async () => {
    const res = await server.admin('GET', '/api/collections/meta/scaffolds');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.base.fields.map((f: { name: string; id: string }) => [f.name, f.id]), [['id', 'text3208210256']]);
    assert.deepEqual(res.body.auth.fields.map((f: { name: string }) => f.name), ['id', 'password', 'tokenKey', 'email', 'emailVisibility', 'verified']);
    assert.ok(res.body.auth.fields.every((f: { system: boolean }) => f.system));
    assert.deepEqual(res.body.view.fields, []);
    const made = await create({ ...res.body.auth, name: 'from_scaffold', fields: [...res.body.auth.fields, { name: 'bio', type: 'text' }] });
    assert.equal(made.status, 200, made.text);
    assert.deepEqual(made.body.schema.map((f: { name: string }) => f.name), ['bio']);
  });
});
