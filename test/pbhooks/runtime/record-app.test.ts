// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
// Record, Collection, $app (reads, save, delete, db queries, recordQuery) against a host that
// answers from a table: what each asks the host and what it makes of the answer.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { testHost } from './host.ts';

const post = { id: 'p1', title: 'Hi', tags: ['a'], n: 2, collectionId: 'c1', collectionName: 'posts' };

describe('Record', () => {
  test('modifiers append, prepend, remove and add; changes are what was set', () => {
    const h = testHost();
    h.eval(`r = new Record(new Collection({ id: 'c1', name: 'posts' }), { title: 'x', tags: ['a'], n: 1 })`);
    h.eval(`r.set('tags+', 'b'); r.set('+tags', 'z'); r.set('tags-', 'a'); r.set('n+', 4)`);
    assert.deepEqual(h.eval('r.get("tags")'), ['z', 'b']);
    assert.equal(h.eval('r.getInt("n")'), 5);
    assert.equal(h.eval('r.isNew()'), true);
    assert.deepEqual(Object.keys(h.eval('r.__changes()')).sort(), ['n', 'tags', 'title']);
  });
  test('a date set from DateTime is stored as text; getters convert', () => {
    const h = testHost();
    h.eval(`r = new Record(); r.set('d', new DateTime('2024-01-02 03:04:05.000Z')); r.set('b', 'true')`);
    assert.equal(h.eval('r.get("d")'), '2024-01-02 03:04:05.000Z');
    assert.equal(h.eval('r.getBool("b")'), true);
    assert.deepEqual(h.eval('r.getStringSlice("missing")'), []);
    assert.equal(h.eval('r.getDateTime("d").time().year()'), 2024);
  });
  test('hide leaves fields out of what a client gets; unhide reads a missing one from the host', () => {
    let reads = 0;
    const h = testHost({ findById: () => (reads++ === 0 ? post : { ...post, secret: 's' }) });
    h.eval(`r = $app.findRecordById('posts', 'p1'); r.hide('title')`);
    assert.deepEqual(Object.keys(h.eval('r.publicExport()')).sort(), ['collectionId', 'collectionName', 'id', 'n', 'tags']);
    h.eval(`r.unhide('secret')`);
    assert.equal(h.eval('r.publicExport().secret'), 's');
    assert.deepEqual(h.calls.map((c) => c.op), ['findById', 'findById']);
  });
  test('setPassword takes a number as its text, as goja converts it for Go', () => {
    const h = testHost();
    h.eval(`r = new Record(new Collection({ name: 'users', type: 'auth' })); r.setPassword(1234567890)`);
    assert.equal(h.eval('r.get("password")'), '1234567890');
    assert.equal(h.eval('r.get("passwordConfirm")'), '1234567890');
  });
  test('can be made without new, as goja allows', () => {
    const h = testHost();
    assert.equal(h.eval(`Record(new Collection({ name: 'x' })).collectionName`), 'x');
  });
});

describe('$app', () => {
  test('save creates a new record with its changes and updates a found one by id', () => {
    const h = testHost({ findById: () => post, create: (_c, data) => ({ ...data, id: 'new1', collectionId: 'c1' }), update: (_c, id, data) => ({ ...post, ...data, id }) });
    h.eval(`n = new Record(new Collection({ name: 'posts' })); n.set('title', 'T'); $app.save(n)`);
    assert.equal(h.eval('n.id'), 'new1');
    assert.equal(h.eval('n.isNew()'), false);
    h.eval(`f = $app.findRecordById('posts', 'p1'); f.set('title', 'U'); $app.save(f)`);
    const [create, , update] = h.calls;
    assert.deepEqual(create, { op: 'create', args: ['posts', { title: 'T' }] });
    assert.deepEqual(update, { op: 'update', args: ['posts', 'p1', { title: 'U' }] });
  });
  test('a collection found is changed on save, a new one created; the cache is cleared', () => {
    let stored: any = { id: 'c1', name: 'posts', type: 'base', fields: [] };
    const h = testHost({ collection: () => stored, saveCollection: (body, existing) => (stored = { ...body, id: existing ? body.id : 'c9' }) });
    h.eval(`c = $app.findCollectionByNameOrId('posts'); c.listRule = ''; $app.save(c)`);
    assert.deepEqual(h.calls[1].args[1], true);
    assert.equal(h.calls[1].args[0].listRule, '');
    h.eval(`$app.findCollectionByNameOrId('posts')`);
    assert.equal(h.calls.filter((c) => c.op === 'collection').length, 2);
    h.eval(`k = new Collection({ name: 'k', type: 'base' }); $app.save(k)`);
    assert.equal(h.eval('k.id'), 'c9');
    assert.equal(h.calls.at(-1)!.args[1], false);
  });
  test('a failed host call throws the API error into the handler', () => {
    const h = testHost();
    assert.equal(h.eval(`(() => { try { $app.findRecordById('posts', 'x') } catch (e) { return e.status } })()`), 404);
  });
  test('db().select builds SQL with named parameters and reads rows into a model', () => {
    const h = testHost({ sql: () => [{ n: '3' }] });
    h.eval(`m = new DynamicModel({ n: 0 }); $app.db().select('COUNT(*) AS n').from('posts').where($dbx.hashExp({ a: 1 })).limit(5).one(m)`);
    const [sql] = h.calls;
    assert.equal(sql.op, 'sql');
    assert.match(sql.args[0], /^SELECT COUNT\(\*\) AS n FROM "posts" WHERE "a"=\{:dbx_p\d+\} LIMIT 5$/);
    assert.equal(h.eval('m.n'), 3);
  });
  test('recordQuery asks for ids by SQL and gives Records', () => {
    const h = testHost({ recordsBySql: () => [post] });
    const title = h.eval(`$app.recordQuery('posts').andWhere($dbx.exp('n > 1')).orderBy('n desc').all()[0].get('title')`);
    assert.equal(title, 'Hi');
    assert.match(h.calls[0].args[1], /^SELECT "posts"."id" FROM "posts" WHERE n > 1 ORDER BY "n" DESC$/);
  });
  test('v0.22 dao hides system collections by type; settings come from the host', () => {
    const h = testHost({ collectionsByType: () => [{ name: 'users' }, { name: '_superusers' }], settings: () => ({ meta: { appName: 'A' } }) });
    assert.equal(h.eval(`$app.findCollectionsByType('auth').length`), 2);
    assert.equal(h.eval(`$app.settings().meta.appName`), 'A');
  });
});
