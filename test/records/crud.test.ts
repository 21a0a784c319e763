import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

// Dates as PocketBase writes them (API contract §23).
const ISO = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('records: create, view, update, delete, expand, fields', () => {
  let server: TestServer;
  let ids: Record<string, string>;
  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'authors', fields: [{ name: 'name', type: 'text' }, { name: 'country', type: 'relation', options: { toCollection: 'countries' } }].slice(0, 1) });
    await createCollection(server, { name: 'countries', fields: [{ name: 'code', type: 'text' }] });
    const authors = (await server.admin('GET', '/api/collections/authors')).body;
    await server.admin('PATCH', '/api/collections/authors', { body: { fields: [...authors.fields, { name: 'country', type: 'relation', options: { toCollection: 'countries' } }] } });
    await createCollection(server, {
      name: 'books',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'pages', type: 'number' },
        { name: 'tags', type: 'select', options: { values: ['sf', 'crime', 'poetry'], maxSelect: 3 } },
        { name: 'author', type: 'relation', options: { toCollection: 'authors' } },
        { name: 'coauthors', type: 'relation', options: { toCollection: 'authors', maxSelect: null } },
      ],
    });
    await createCollection(server, { name: 'reviews', fields: [{ name: 'book', type: 'relation', required: true, options: { toCollection: 'books', cascadeDelete: true } }, { name: 'stars', type: 'number' }] });
    const country = (await server.admin('POST', '/api/collections/countries/records', { body: { code: 'IS' } })).body.id;
    const ann = (await server.admin('POST', '/api/collections/authors/records', { body: { name: 'Ann', country } })).body.id;
    const bob = (await server.admin('POST', '/api/collections/authors/records', { body: { name: 'Bob' } })).body.id;
    ids = { country, ann, bob };
  });
  after(() => server.close());

  test('create answers 200 with the record: id, collection, timestamps and values', async () => {
    const books = (await server.admin('GET', '/api/collections/books')).body;
    const res = await server.admin('POST', '/api/collections/books/records', { body: { title: 'Dune', pages: 412, tags: ['sf'], author: ids.ann } });
    assert.equal(res.status, 200, res.text);
    const r = res.body;
    assert.match(r.id, /^[a-z0-9]{15}$/);
    assert.equal(r.collectionId, books.id);
    assert.equal(r.collectionName, 'books');
    assert.match(r.created, ISO);
    assert.equal(r.created, r.updated);
    assert.deepEqual([r.title, r.pages, r.tags, r.author, r.coauthors], ['Dune', 412, ['sf'], ids.ann, []]);
    ids.dune = r.id;
  });

  test('a client-chosen id is used when it is 15 lower-case alphanumerics, refused otherwise', async () => {
    const res = await server.admin('POST', '/api/collections/books/records', { body: { id: 'mybook000000001', title: 'Chosen' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.id, 'mybook000000001');
    const dup = await server.admin('POST', '/api/collections/books/records', { body: { id: 'mybook000000001', title: 'Again' } });
    assert.equal(dup.status, 400);
    assert.equal(dup.body.data.id.code, 'validation_not_unique');
    const bad = await server.admin('POST', '/api/collections/books/records', { body: { id: 'BAD-ID', title: 'x' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.data.id.code, 'validation_min_text_constraint', 'PocketBase’s code for a short id');
    for (const [id, code] of [['mybook0000000012', 'validation_max_text_constraint'], ['MyBook000000001', 'validation_invalid_format']]) {
      const res = await server.admin('POST', '/api/collections/books/records', { body: { id, title: 'x' } });
      assert.equal(res.status, 400);
      assert.equal(res.body.data.id.code, code, id);
    }
  });

  test("a collection whose id field takes other ids keeps them, as PocketBase's id field does", async () => {
    // The ≥ 0.23 fields list, id field included, as a PocketBase schema describes it.
    const idField = (min: number, max: number, pattern: string) => ({ name: 'id', type: 'text', system: true, primaryKey: true, required: true, min, max, pattern, autogeneratePattern: '[a-z0-9]{15}', hidden: false, presentable: false, id: 'text3208210256' });
    await createCollection(server, {
      name: 'chapters',
      listRule: '',
      viewRule: '',
      fields: [idField(1, 40, '^[\\w-]+$'), { name: 'title', type: 'text' }, { name: 'scan', type: 'file', maxSelect: 1, maxSize: 10000 }],
    });
    await createCollection(server, { name: 'notes_short', fields: [idField(3, 20, '^[a-z0-9]+$'), { name: 'text', type: 'text' }] });
    await createCollection(server, { name: 'marks', fields: [{ name: 'chapter', type: 'relation', options: { toCollection: 'chapters', maxSelect: 1 } }] });

    for (const id of ['Chapter_1', 'part-two', 'x', '7']) {
      const res = await server.admin('POST', '/api/collections/chapters/records', { body: { id, title: id } });
      assert.equal(res.status, 200, `${id}: ${res.text}`);
      assert.equal(res.body.id, id);
      assert.equal((await server.request('GET', `/api/collections/chapters/records/${id}`)).body.title, id);
    }
    for (const [id, code] of [
      ['a.b', 'validation_invalid_format'],
      ['a'.repeat(41), 'validation_max_text_constraint'],
      ['con', 'validation_reserved_pk'],
      ['Chapter_1', 'validation_not_unique'],
    ]) {
      const res = await server.admin('POST', '/api/collections/chapters/records', { body: { id, title: 'x' } });
      assert.equal(res.status, 400, id);
      assert.equal(res.body.data.id?.code, code, `${id}: ${res.text}`);
    }
    // Without an id the record gets one of Cairn's.
    assert.match((await server.admin('POST', '/api/collections/chapters/records', { body: { title: 'auto' } })).body.id, /^[a-z0-9]{15}$/);

    // PocketBase's pattern with other lengths.
    assert.equal((await server.admin('POST', '/api/collections/notes_short/records', { body: { id: 'abc', text: 'x' } })).body.id, 'abc');
    for (const [id, code] of [['ab', 'validation_min_text_constraint'], ['ABC', 'validation_invalid_format'], ['a_b', 'validation_invalid_format']]) {
      assert.equal((await server.admin('POST', '/api/collections/notes_short/records', { body: { id, text: 'x' } })).body.data.id?.code, code, id);
    }
    // A collection of PocketBase's default id field still takes 15 lower-case letters and digits only.
    assert.equal((await server.admin('POST', '/api/collections/books/records', { body: { id: 'Chapter_1', title: 'x' } })).body.data.id?.code, 'validation_min_text_constraint');

    // Such a record is a relation's target, and its files are stored and served under its id.
    const mark = await server.admin('POST', '/api/collections/marks/records', { body: { chapter: 'part-two' }, headers: {} });
    assert.equal(mark.status, 200, mark.text);
    assert.equal(mark.body.chapter, 'part-two');
    for (const chapter of ['no-such-one', 'a.b']) {
      const missing = await server.admin('POST', '/api/collections/marks/records', { body: { chapter } });
      assert.equal(missing.body.data?.chapter?.code, 'validation_missing_rel_records', `${chapter}: ${missing.text}`);
    }
    // An id no record of the target can have is reported with the other fields' problems, as PocketBase does.
    const both = await server.admin('POST', '/api/collections/reviews/records', { body: { book: 'Chapter_1', stars: 'many' } });
    assert.equal(both.status, 400);
    assert.deepEqual(Object.keys(both.body.data).sort(), ['book', 'stars'], both.text);
    assert.equal(both.body.data.book.code, 'validation_missing_rel_records');
    const expanded = await server.admin('GET', `/api/collections/marks/records/${mark.body.id}?expand=chapter`);
    assert.equal(expanded.body.expand.chapter.id, 'part-two');
    const form = new FormData();
    form.append('id', 'with-scan_1');
    form.append('scan', new Blob(['page one'], { type: 'text/plain' }), 'page.txt');
    const withScan = await server.admin('POST', '/api/collections/chapters/records', { raw: form });
    assert.equal(withScan.status, 200, withScan.text);
    const file = await fetch(`${server.url}/api/files/chapters/with-scan_1/${withScan.body.scan}`);
    assert.equal(file.status, 200);
    assert.equal(await file.text(), 'page one');
    assert.equal((await server.admin('DELETE', '/api/collections/chapters/records/with-scan_1')).status, 204);
  });

  test('view by id; unknown ids and collections are 404', async () => {
    const res = await server.admin('GET', `/api/collections/books/records/${ids.dune}`);
    assert.equal(res.status, 200);
    assert.equal(res.body.title, 'Dune');
    for (const p of ['/api/collections/books/records/zzzzzzzzzzzzzzz', "/api/collections/books/records/x' OR '1'='1", '/api/collections/nope/records', '/api/collections/nope/records/abc']) {
      const r = await server.admin('GET', p);
      assert.equal(r.status, 404, p);
      assert.equal(r.body.code, 404);
    }
  });

  test('update changes only the given fields and moves `updated`', async () => {
    const before = (await server.admin('GET', `/api/collections/books/records/${ids.dune}`)).body;
    const res = await server.admin('PATCH', `/api/collections/books/records/${ids.dune}`, { body: { pages: 500 } });
    assert.equal(res.status, 200);
    assert.equal(res.body.pages, 500);
    assert.equal(res.body.title, 'Dune');
    assert.equal(res.body.created, before.created);
    assert.ok(res.body.updated >= before.updated);
    assert.equal((await server.admin('PATCH', '/api/collections/books/records/zzzzzzzzzzzzzzz', { body: { pages: 1 } })).status, 404);
  });

  test('PocketBase modifiers: field+ appends (adds to numbers), field- removes', async () => {
    const res = await server.admin('PATCH', `/api/collections/books/records/${ids.dune}`, { body: { 'tags+': 'crime', 'pages+': 5 } });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.tags, ['sf', 'crime']);
    assert.equal(res.body.pages, 505);
    const removed = await server.admin('PATCH', `/api/collections/books/records/${ids.dune}`, { body: { 'tags-': ['sf'] } });
    assert.deepEqual(removed.body.tags, ['crime']);
    // An object is no amount, whatever its keys (Number() would call a `toString` it sent as a value).
    for (const key of ['pages+', 'pages-']) {
      const odd = await server.admin('PATCH', `/api/collections/books/records/${ids.dune}`, { body: { [key]: { toString: 'x', valueOf: 1 } } });
      assert.equal(odd.status, 400, odd.text);
      assert.equal(odd.body.data.pages.code, 'validation_invalid_number');
    }
    assert.equal((await server.admin('GET', `/api/collections/books/records/${ids.dune}`)).body.pages, 505);
  });

  test('half of a surrogate pair in a string is refused: it would not read back as written', async () => {
    for (const raw of ['{"title": "\\udc00 alone"}', '{"title": "x\\ud83d"}', '{"title": "ok", "\\ud800": 1}']) {
      const res = await server.admin('POST', '/api/collections/books/records', { raw, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, raw);
      assert.match(res.body.message, /surrogate/);
    }
    const pair = await server.admin('POST', '/api/collections/books/records', { raw: '{"title": "smile \\ud83d\\ude00"}', headers: { 'content-type': 'application/json' } });
    assert.equal(pair.status, 200, pair.text);
    assert.equal((await server.admin('GET', `/api/collections/books/records/${pair.body.id}`)).body.title, 'smile \u{1F600}');
  });

  test('concurrent writes: updates made from stored values all count, refused relations answer at once', async () => {
    const book = (await server.admin('POST', '/api/collections/books/records', { body: { title: 'Counted', pages: 0 } })).body;
    const adds = await Promise.all(Array.from({ length: 20 }, () => server.admin('PATCH', `/api/collections/books/records/${book.id}`, { body: { 'pages+': 1 } })));
    assert.deepEqual([...new Set(adds.map((r) => r.status))], [200]);
    assert.equal((await server.admin('GET', `/api/collections/books/records/${book.id}`)).body.pages, 20, 'no update made from a stale row');
    // More creates than the PostgreSQL pool has connections, each refused for a missing author: each
    // finds out why once its transaction let go of its connection.
    const refused = await Promise.all(Array.from({ length: 25 }, (_, i) => server.admin('POST', '/api/collections/books/records', { body: { title: `Orphan ${i}`, author: 'missingauthor00' } })));
    for (const r of refused) {
      assert.equal(r.status, 400, r.text);
      assert.equal(r.body.data.author.code, 'validation_missing_rel_records');
    }
  });

  test('concurrent writes: a create or update racing the delete of the record it points at never leaves a reference to it', async () => {
    for (let round = 0; round < 4; round++) {
      const target = (await server.admin('POST', '/api/collections/authors/records', { body: { name: `Gone ${round}` } })).body.id;
      const spare = (await server.admin('POST', '/api/collections/books/records', { body: { title: `Spare ${round}` } })).body.id;
      const writes = Array.from({ length: 12 }, (_, i) =>
        i === 6
          ? server.admin('PATCH', `/api/collections/books/records/${spare}`, { body: { author: target } })
          : server.admin('POST', '/api/collections/books/records', { body: { title: `Race ${round}.${i}`, coauthors: [ids.bob, target] } }),
      );
      const deleted = server.admin('DELETE', `/api/collections/authors/records/${target}`);
      for (const r of await Promise.all(writes)) {
        assert.ok(r.status === 200 || (r.status === 400 && Object.values(r.body.data).some((e: any) => e.code === 'validation_missing_rel_records')), r.text);
      }
      assert.equal((await deleted).status, 204);
      const left = await server.admin('GET', `/api/collections/books/records?filter=${encodeURIComponent(`author = "${target}" || coauthors ~ "${target}"`)}`);
      assert.deepEqual(left.body.items, [], 'no book points at the deleted author');
    }
  });

  test('a body with an escape and a long array is read (the surrogate check walks it without overflowing)', async () => {
    const raw = `{"title": "caf\\u00e9", "ignored": [${Array.from({ length: 200_000 }, () => '0').join(',')}]}`;
    const res = await server.admin('POST', '/api/collections/books/records', { raw, headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 200, res.text.slice(0, 300));
    assert.equal(res.body.title, 'café');
  });

  test('non-object bodies are refused', async () => {
    for (const raw of ['[1,2]', '"text"', '42', 'null']) {
      const res = await server.admin('POST', '/api/collections/books/records', { raw, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, raw);
      assert.equal(res.body.code, 400);
    }
  });

  test('expand resolves relations, multiple ones and nested paths', async () => {
    const b = await server.admin('POST', '/api/collections/books/records', { body: { title: 'Duo', author: ids.ann, coauthors: [ids.bob, ids.ann] } });
    ids.duo = b.body.id;
    const res = await server.admin('GET', `/api/collections/books/records/${ids.duo}?expand=author.country,coauthors`);
    assert.equal(res.status, 200);
    const e = res.body.expand;
    assert.equal(e.author.name, 'Ann');
    assert.equal(e.author.expand.country.code, 'IS');
    assert.deepEqual(
      e.coauthors.map((a: any) => a.name),
      ['Bob', 'Ann'],
    );
    assert.equal(res.body.author, ids.ann, 'the id stays in place');

    const list = await server.admin('GET', `/api/collections/books/records?filter=${encodeURIComponent(`id = "${ids.duo}"`)}&expand=author`);
    assert.equal(list.body.items[0].expand.author.name, 'Ann');
    const none = await server.admin('GET', `/api/collections/books/records/${ids.dune}?expand=coauthors`);
    assert.deepEqual(none.body.expand, {}, 'a relation with nothing to expand: an empty expand, as PocketBase');
  });

  test('expand follows back-relations (<collection>_via_<field>), ignores paths that lead nowhere, refuses malformed ones', async () => {
    await server.admin('POST', '/api/collections/reviews/records', { body: { book: ids.duo, stars: 4 } });
    const res = await server.admin('GET', `/api/collections/books/records/${ids.duo}?expand=reviews_via_book`);
    assert.equal(res.body.expand.reviews_via_book[0].stars, 4);
    // As in PocketBase: one expand serves several collections, so a path that leads nowhere expands nothing.
    const nowhere = await server.admin('GET', `/api/collections/books/records/${ids.duo}?expand=title,missing,nope_via_book,reviews_via_book.missing`);
    assert.equal(nowhere.status, 200);
    assert.deepEqual(Object.keys(nowhere.body.expand ?? {}), ['reviews_via_book']);
    const hostile = await server.admin('GET', `/api/collections/books/records/${ids.duo}?expand=${encodeURIComponent('author);DROP TABLE books;--')}`);
    assert.equal(hostile.status, 400);
  });

  test('fields picks keys, including inside expand, and excerpts', async () => {
    const res = await server.admin('GET', `/api/collections/books/records/${ids.duo}?expand=author&fields=id,title,expand.author.name`);
    assert.deepEqual(res.body, { id: ids.duo, title: 'Duo', expand: { author: { name: 'Ann' } } });
    const ex = await server.admin('GET', `/api/collections/books/records/${ids.dune}?fields=${encodeURIComponent('title:excerpt(2,true)')}`);
    assert.deepEqual(ex.body, { title: 'Du...' });
    const list = await server.admin('GET', '/api/collections/books/records?fields=title&perPage=1');
    assert.deepEqual(Object.keys(list.body.items[0]), ['title']);
    assert.equal(list.body.page, 1, 'fields applies to items, not the envelope');
  });

  test('delete answers 204; cascades and clears references; a required reference cascades', async () => {
    const del = await server.admin('DELETE', `/api/collections/books/records/${ids.duo}`);
    assert.equal(del.status, 204);
    assert.equal(del.text, '');
    assert.equal((await server.admin('GET', `/api/collections/books/records/${ids.duo}`)).status, 404);
    const reviews = await server.admin('GET', '/api/collections/reviews/records');
    assert.equal(reviews.body.totalItems, 0, 'cascadeDelete removed the review');
    assert.equal((await server.admin('DELETE', `/api/collections/books/records/${ids.duo}`)).status, 404);

    // Deleting an author clears the optional reference in books.
    const delAuthor = await server.admin('DELETE', `/api/collections/authors/records/${ids.ann}`);
    assert.equal(delAuthor.status, 204);
    assert.equal((await server.admin('GET', `/api/collections/books/records/${ids.dune}`)).body.author, '');
  });

  test('a required relation without cascade refuses the delete of its target', async () => {
    await createCollection(server, { name: 'loans', fields: [{ name: 'book', type: 'relation', required: true, options: { toCollection: 'books' } }] });
    await server.admin('POST', '/api/collections/loans/records', { body: { book: ids.dune } });
    const res = await server.admin('DELETE', `/api/collections/books/records/${ids.dune}`);
    assert.equal(res.status, 400);
    assert.match(res.body.message, /loans\.book/);
    assert.equal((await server.admin('GET', `/api/collections/books/records/${ids.dune}`)).status, 200);
  });

  test('auth records never expose password hashes or token keys', async () => {
    const res = await server.admin('POST', '/api/collections/users/records', { body: { email: 'u1@example.com', password: 'user-password-1', passwordConfirm: 'user-password-1', name: 'U' } });
    assert.equal(res.status, 200, res.text);
    for (const key of ['password', 'passwordHash', 'tokenKey', 'passwordConfirm']) assert.equal(key in res.body, false, key);
    assert.equal(res.body.email, 'u1@example.com', 'admins see the email');
    const list = await server.admin('GET', '/api/collections/users/records');
    assert.doesNotMatch(list.text, /passwordHash|tokenKey|argon2/);
  });
});
