import assert from 'node:assert/strict';
import fc from 'fast-check';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

const TITLES = ['alpha', 'beta', "it's", 'gamma "quoted"', '50% off'];

const FILTERS = [
  'title = "x" OR 1=1',
  "title = '' || 1=1 --",
  'title = "\'; DROP TABLE notes; --"',
  "title = 'x\\'); DROP TABLE notes; --'",
  '1; DROP TABLE notes',
  'title = (SELECT 1)',
  "title ~ \"%' OR '1'='1\"",
  'title = "\u0000"',
  'id = sqlite_master.name',
  'id = pg_catalog.pg_tables.tablename',
  'id = information_schema.tables.table_name',
  'title = cairn_system._secrets.value',
  'title IN ("a")',
  'title = "a"; DELETE FROM notes',
  'ti"tle = 1',
  'title/**/= "alpha"',
  'title = "alpha" -- comment',
  'title = "alpha" // line comment',
  'secret.value != ""',
  'title.value = 1',
  'title:drop = 1',
  'meta.$.x = 1',
  "meta.a') OR 1=1 -- = 1",
  'notes_via_title.id != ""',
  'titlé = 1',
  `${'('.repeat(100)}title = "a"${')'.repeat(100)}`,
  Array.from({ length: 300 }, () => 'title = "a"').join(' || '),
  `title = "${'x'.repeat(10_000)}"`,
  'title = "a" && && title = "b"',
  '()',
  ')',
  '',
  '   ',
  '"',
  '\\',
  'title = 99999999999999999999999999999999999',
  'title = -',
  'created > @yesterday',
];

const SORTS = [
  'title; DROP TABLE notes',
  '(SELECT 1)',
  '-title,1',
  'title COLLATE NOCASE',
  'title DESC',
  'title,,,-created',
  'rowid',
  'sqlite_master.name',
  'pg_class.relname',
  '_seq',
  '-(title)',
  "title'",
  'title--',
  '@random',
  '@rowid',
  'secret.value',
  Array.from({ length: 40 }, () => 'title').join(','),
];

describe('filter and sort injection attempts', () => {
  let server: TestServer;
  let ids: string[];

  async function assertIntact(): Promise<void> {
    const res = await server.admin('GET', '/api/collections/notes/records?sort=created&perPage=100');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.items.map((r: any) => r.title),
      TITLES,
    );
    assert.deepEqual(
      res.body.items.map((r: any) => r.id),
      ids,
    );
    const secrets = await server.admin('GET', '/api/collections/secrets/records');
    assert.equal(secrets.body.totalItems, 1);
    assert.equal((await server.admin('GET', '/api/collections')).status, 200);
  }

  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'secrets', fields: [{ name: 'value', type: 'text' }] });
    const secret = (await server.admin('POST', '/api/collections/secrets/records', { body: { value: 'top secret' } })).body.id;
    await createCollection(server, {
      name: 'notes',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'meta', type: 'json' },
        { name: 'secret', type: 'relation', options: { toCollection: 'secrets' } },
      ],
    });
    ids = [];
    for (const title of TITLES) ids.push((await server.admin('POST', '/api/collections/notes/records', { body: { title, meta: { a: 1 }, secret } })).body.id);
  });
  after(() => server.close());

  test('hostile filters get a 200 or a 400, never a 500, and change nothing', async () => {
    for (const expr of FILTERS) {
      const res = await server.admin('GET', `/api/collections/notes/records?filter=${encodeURIComponent(expr)}`);
      assert.ok(res.status === 200 || res.status === 400, `${res.status} for ${expr.slice(0, 80)}: ${res.text.slice(0, 200)}`);
      assert.equal(res.body.code ?? 200, res.status);
      // No database error reaches the client, SQLite's or PostgreSQL's.
      assert.doesNotMatch(res.text, /SQLITE|sqlite3|syntax error at or near|(relation|column|function|schema) "[^"]*" does not exist|operator does not exist|at .*\.ts:\d+/, expr.slice(0, 80));
      if (res.status === 200) assert.ok(res.body.items.every((r: any) => TITLES.includes(r.title)));
    }
    await assertIntact();
  });

  test('a string value is compared as a value, quotes and SQL included', async () => {
    for (const title of TITLES) {
      const quoted = `"${title.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
      const res = await server.admin('GET', `/api/collections/notes/records?filter=${encodeURIComponent(`title = ${quoted}`)}`);
      assert.equal(res.status, 200);
      assert.deepEqual(
        res.body.items.map((r: any) => r.title),
        [title],
      );
    }
  });

  test('hostile sorts get a 200 or a 400, never a 500, and change nothing', async () => {
    for (const sort of SORTS) {
      const res = await server.admin('GET', `/api/collections/notes/records?sort=${encodeURIComponent(sort)}`);
      assert.ok(res.status === 200 || res.status === 400, `${res.status} for ${sort}: ${res.text.slice(0, 200)}`);
      if (res.status === 200) assert.equal(res.body.items.length, TITLES.length);
    }
    await assertIntact();
  });

  test('hostile names in paths, expand and fields are 400 or 404', async () => {
    for (const p of [
      '/api/collections/notes%22%3BDROP%20TABLE%20notes/records',
      '/api/collections/_collections/records',
      '/api/collections/sqlite_master/records',
      '/api/collections/pg_class/records',
      '/api/collections/cairn_system._secrets/records',
      `/api/collections/notes/records/${encodeURIComponent("' OR 1=1 --")}`,
      `/api/collections/notes/records?expand=${encodeURIComponent('secret) FROM secrets --')}`,
      `/api/collections/notes/records?fields=${encodeURIComponent('title,(SELECT value FROM secrets)')}`,
    ]) {
      const res = await server.admin('GET', p);
      assert.ok(res.status === 400 || res.status === 404, `${res.status} for ${p}`);
    }
    const res = await server.admin('POST', '/api/collections/notes/records', { body: { 'title"); DROP TABLE notes; --': 'x', title: 'extra' } });
    assert.equal(res.status, 200, 'unknown keys are ignored');
    assert.equal((await server.admin('DELETE', `/api/collections/notes/records/${res.body.id}`)).status, 204);
    await assertIntact();
  });

  test('arbitrary filter and sort text never causes a 500', async () => {
    const alphabet = fc.constantFrom(...'titlemea.$@_ \'"\\=!<>~?&|()%-;,:0123456789xyz'.split(''));
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: alphabet, maxLength: 40 }), fc.string({ unit: alphabet, maxLength: 20 }), async (expr, sort) => {
        const res = await server.admin('GET', `/api/collections/notes/records?filter=${encodeURIComponent(expr)}&sort=${encodeURIComponent(sort)}`);
        return res.status === 200 || res.status === 400;
      }),
      { numRuns: 300 },
    );
    await assertIntact();
  });
});
