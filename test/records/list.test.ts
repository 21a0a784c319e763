import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

const PEOPLE = [
  { name: 'Ann', age: 31, city: 'Oslo', active: true, team: 'red', tags: ['dev'] },
  { name: 'Bob', age: 25, city: 'Rome', active: false, team: 'blue', tags: ['ops'] },
  { name: 'Cid', age: 31, city: 'Oslo', active: false, team: 'blue', tags: ['dev', 'ops'] },
  { name: 'Dee', age: 40, city: 'Lima', active: true, team: 'red', tags: [] },
  { name: 'Eve', age: 25, city: 'Oslo', active: true, team: '', tags: ['sec'] },
  { name: "O'Hara", age: 52, city: 'Rome', active: true, team: 'blue', tags: ['dev'] },
  { name: '100% pure', age: 19, city: 'Lima', active: false, team: '', tags: [] },
];

describe('record lists: pagination, sort, filter, fields, skipTotal', () => {
  let server: TestServer;
  const list = (query: string) => server.admin('GET', `/api/collections/people/records?${query}`);
  const names = async (query: string) => {
    const res = await list(query);
    assert.equal(res.status, 200, `${query}: ${res.text}`);
    return res.body.items.map((r: any) => r.name);
  };
  const filter = (expr: string, extra = 'sort=name&perPage=100') => names(`filter=${encodeURIComponent(expr)}&${extra}`);

  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'teams', fields: [{ name: 'label', type: 'text' }] });
    const teams: Record<string, string> = {};
    for (const label of ['red', 'blue']) teams[label] = (await server.admin('POST', '/api/collections/teams/records', { body: { label } })).body.id;
    await createCollection(server, {
      name: 'people',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'age', type: 'number' },
        { name: 'city', type: 'text' },
        { name: 'active', type: 'bool' },
        { name: 'team', type: 'relation', options: { toCollection: 'teams' } },
        { name: 'tags', type: 'select', options: { values: ['dev', 'ops', 'sec'], maxSelect: 3 } },
      ],
    });
    for (const p of PEOPLE) {
      const res = await server.admin('POST', '/api/collections/people/records', { body: { ...p, team: p.team ? teams[p.team] : '' } });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(() => server.close());

  test('defaults: page 1, 30 per page, totals, insertion order', async () => {
    const res = await list('');
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.page, res.body.perPage, res.body.totalItems, res.body.totalPages], [1, 30, 7, 1]);
    assert.deepEqual(
      res.body.items.map((r: any) => r.name),
      PEOPLE.map((p) => p.name),
    );
  });

  test('pagination: pages, the last partial page, a page past the end', async () => {
    const p2 = await list('perPage=3&page=2');
    assert.deepEqual([p2.body.page, p2.body.perPage, p2.body.totalItems, p2.body.totalPages], [2, 3, 7, 3]);
    assert.deepEqual(
      p2.body.items.map((r: any) => r.name),
      ['Dee', 'Eve', "O'Hara"],
    );
    assert.equal((await list('perPage=3&page=3')).body.items.length, 1);
    const past = await list('perPage=3&page=99');
    assert.equal(past.status, 200);
    assert.deepEqual(past.body.items, []);
    assert.equal(past.body.page, 99);
    assert.equal(past.body.totalItems, 7);
  });

  test('perPage 0 and -1 fall back to 30; 10000 is clamped to 500; page 0 reads as 1', async () => {
    for (const [query, perPage] of [
      ['perPage=0', 30],
      ['perPage=-1', 30],
      ['perPage=10000', 500],
      ['perPage=500', 500],
    ] as const) {
      const res = await list(query);
      assert.equal(res.status, 200, query);
      assert.equal(res.body.perPage, perPage, query);
      assert.equal(res.body.items.length, 7);
    }
    assert.equal((await list('page=0')).body.page, 1);
    assert.equal((await list('page=-5')).body.page, 1);
  });

  test('non-numeric page and perPage are 400, not 500', async () => {
    for (const query of ['page=abc', 'perPage=1e3', 'perPage=ten', `page=${'9'.repeat(40)}`]) {
      const res = await list(query);
      assert.equal(res.status, 400, query);
      assert.equal(res.body.code, 400);
    }
  });

  test('skipTotal leaves the totals at -1', async () => {
    const res = await list('skipTotal=1&perPage=2');
    assert.deepEqual([res.body.totalItems, res.body.totalPages, res.body.items.length], [-1, -1, 2]);
  });

  test('sort on several fields, ascending and descending', async () => {
    assert.deepEqual(await names('sort=-age,name'), ["O'Hara", 'Dee', 'Ann', 'Cid', 'Bob', 'Eve', '100% pure']);
    assert.deepEqual(await names('sort=city,-name'), ['Dee', '100% pure', "O'Hara", 'Eve', 'Cid', 'Ann', 'Bob'].sort((a, b) => {
      const pa = PEOPLE.find((p) => p.name === a)!;
      const pb = PEOPLE.find((p) => p.name === b)!;
      return pa.city.localeCompare(pb.city) || pb.name.localeCompare(pa.name);
    }));
    assert.deepEqual(await names('sort=%2Bage,-created&perPage=2'), ['100% pure', 'Eve']);
    assert.deepEqual(await names('sort=team.label,name'), ['100% pure', 'Eve', 'Bob', 'Cid', "O'Hara", 'Ann', 'Dee']);
  });

  test('filter with =, !=, >, <=, &&, || and parentheses', async () => {
    assert.deepEqual(await filter('city = "Oslo"'), ['Ann', 'Cid', 'Eve']);
    assert.deepEqual(await filter("city != 'Oslo' && age > 30"), ['Dee', "O'Hara"]);
    assert.deepEqual(await filter('age <= 25 || city = "Lima"'), ['100% pure', 'Bob', 'Dee', 'Eve']);
    // && binds tighter than ||; parentheses change that.
    assert.deepEqual(await filter('city = "Rome" || city = "Oslo" && age > 30'), ['Ann', 'Bob', 'Cid', "O'Hara"]);
    assert.deepEqual(await filter('(city = "Rome" || city = "Oslo") && age > 30'), ['Ann', 'Cid', "O'Hara"]);
    assert.deepEqual(await filter('((active = true) && (age >= 40 || name = "Eve"))'), ['Dee', 'Eve', "O'Hara"]);
  });

  test('filter with ~ and !~ (contains, case-insensitive; a value with % is the pattern as written)', async () => {
    assert.deepEqual(await filter('name ~ "e"'), ['100% pure', 'Dee', 'Eve']);
    assert.deepEqual(await filter('city ~ "OS"'), ['Ann', 'Cid', 'Eve']);
    assert.deepEqual(await filter('name ~ "10%"'), ['100% pure']);
    assert.deepEqual(await filter('name ~ "%e"'), ['100% pure', 'Dee', 'Eve']);
    assert.deepEqual(await filter('name ~ "b%"'), ['Bob']);
    assert.deepEqual(await filter('name ~ "_"'), [], 'without %, _ is a literal character');
    assert.deepEqual(await filter('name !~ "e" && city ~ "o"'), ['Ann', 'Bob', 'Cid', "O'Hara"]);
  });

  test('~ folds the case of ASCII letters only, on both engines (as SQLite and PocketBase do)', async () => {
    await createCollection(server, { name: 'words', fields: [{ name: 'word', type: 'text' }] });
    for (const word of ['Äpfel', 'äpfel', 'APFEL', 'straße']) {
      assert.equal((await server.admin('POST', '/api/collections/words/records', { body: { word } })).status, 200);
    }
    const words = async (expr: string) => {
      const res = await server.admin('GET', `/api/collections/words/records?sort=word&filter=${encodeURIComponent(expr)}`);
      assert.equal(res.status, 200, res.text);
      return res.body.items.map((r: any) => r.word);
    };
    assert.deepEqual(await words('word ~ "äpf"'), ['äpfel']);
    assert.deepEqual(await words('word ~ "PFEL"'), ['APFEL', 'Äpfel', 'äpfel']);
    assert.deepEqual(await words('word ~ "STRASSE"'), []);
    assert.deepEqual(await words('word ~ "STRAßE"'), ['straße']);
  });

  test('filter on bools, empty values, relations and multiple values', async () => {
    assert.deepEqual(await filter('active = false'), ['100% pure', 'Bob', 'Cid']);
    assert.deepEqual(await filter('team = ""'), ['100% pure', 'Eve']);
    assert.deepEqual(await filter('team = null'), ['100% pure', 'Eve']);
    assert.deepEqual(await filter('team.label = "red"'), ['Ann', 'Dee']);
    assert.deepEqual(await filter('tags ?= "ops"'), ['Bob', 'Cid']);
    assert.deepEqual(await filter('tags:length = 2'), ['Cid']);
    assert.deepEqual(await filter("name = 'O\\'Hara'"), ["O'Hara"]);
  });

  test('filter on system fields and dates', async () => {
    const all = (await list('sort=created')).body.items;
    assert.deepEqual(await filter(`id = "${all[0].id}"`), [all[0].name]);
    assert.equal((await filter('created <= @now')).length, 7);
    assert.equal((await filter('created > "2000-01-01 00:00:00.000Z"')).length, 7);
  });

  test('invalid filters and sorts are 400 saying where', async () => {
    for (const expr of ['name =', 'name = "open', 'nope = 1', '(name = "a"', 'name = "a" &&', 'name === "a"', 'passwordHash = ""', 'name = "a" | age = 1']) {
      const res = await list(`filter=${encodeURIComponent(expr)}`);
      assert.equal(res.status, 400, expr);
      assert.match(res.body.message, /^Invalid filter: .*position/, expr);
      assert.deepEqual(res.body.data, {}, expr);
    }
    for (const sort of ['nope', 'name;', '-', 'tags', 'name desc']) {
      const res = await list(`sort=${encodeURIComponent(sort)}`);
      assert.equal(res.status, 400, sort);
      assert.match(res.body.message, /^Invalid sort: /, sort);
      assert.deepEqual(res.body.data, {}, sort);
    }
  });

  test('fields narrows each item', async () => {
    const res = await list('fields=name,age&sort=name&perPage=2');
    assert.deepEqual(res.body.items, [
      { name: '100% pure', age: 19 },
      { name: 'Ann', age: 31 },
    ]);
  });
});
