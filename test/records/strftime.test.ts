import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { onPostgres } from '../helpers/postgres.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

/**
 * PocketBase's `strftime(format, time, modifier…)` (≥ 0.36) in filters and rules, on both engines:
 * over date fields, numbers, paths through relations (a multiple one matched value by value), the
 * request's values, and without a time (now).
 */
describe('strftime in filters and rules', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'slots', fields: [{ name: 'starts', type: 'date' }], listRule: '', viewRule: '' });
    await createCollection(server, {
      name: 'events',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'at', type: 'date' },
        { name: 'stamp', type: 'number' },
        { name: 'slots', type: 'relation', collectionId: 'slots', maxSelect: 5 },
        { name: 'main', type: 'relation', collectionId: 'slots', maxSelect: 1 },
      ],
      listRule: '',
      viewRule: '',
    });
    const add = async (collection: string, body: Record<string, unknown>) => {
      const res = await server.admin('POST', `/api/collections/${collection}/records`, { body });
      assert.equal(res.status, 200, res.text);
      return res.body.id as string;
    };
    const jan = await add('slots', { starts: '2026-01-10 09:00:00.000Z' });
    const jan2 = await add('slots', { starts: '2026-01-20 09:00:00.000Z' });
    const feb = await add('slots', { starts: '2026-02-03 09:00:00.000Z' });
    await add('events', { name: 'launch', at: '2026-01-31 22:30:00.000Z', stamp: 1700000000, slots: [jan, jan2], main: feb });
    await add('events', { name: 'review', at: '2026-02-01 08:00:00.000Z', stamp: 1735689600, slots: [jan, feb], main: jan });
    await add('events', { name: 'undated', stamp: 0 });
    // The events of the year the client asks for.
    await createCollection(server, {
      name: 'by_year',
      type: 'view',
      viewQuery: 'SELECT id, name, at FROM events',
      listRule: "strftime('%Y', at) = @request.query.year",
    });
  });
  after(() => server?.close());

  const list = async (filter: string, collection = 'events', query = '') => {
    const res = await server.request('GET', `/api/collections/${collection}/records?sort=name&filter=${encodeURIComponent(filter)}${query}`);
    return res;
  };
  const names = async (filter: string, collection = 'events', query = '') => {
    const res = await list(filter, collection, query);
    assert.equal(res.status, 200, `${filter}: ${res.text}`);
    return res.body.items.map((r: { name: string }) => r.name);
  };

  test('a date field formatted, with modifiers', async () => {
    assert.deepEqual(await names("strftime('%Y-%m', at) = '2026-01'"), ['launch']);
    assert.deepEqual(await names("strftime('%Y-%m', at) = '2026-02'"), ['review']);
    // Two hours later the launch is in February too; its month's start is then February 1st.
    assert.deepEqual(await names("strftime('%m', at, '+2 hours') = '02'"), ['launch', 'review']);
    assert.deepEqual(await names("strftime('%F', at, '+2 hours', 'start of month') = '2026-02-01'"), ['launch', 'review']);
    // Weekday of the date (0 = Sunday): January 31st, 2026 is a Saturday.
    assert.deepEqual(await names("strftime('%w', at) = '6'"), ['launch']);
    // A record without a date formats to '', as PocketBase's NULL fallback.
    assert.deepEqual(await names("strftime('%Y', at) = ''"), ['undated']);
    assert.deepEqual(await names("strftime('%Y', at) != ''"), ['launch', 'review']);
  });

  test('a number field as unix seconds, a literal time, and now', async () => {
    assert.deepEqual(await names("strftime('%Y', stamp, 'unixepoch') = '2025'"), ['review']);
    assert.deepEqual(await names("strftime('%F', stamp, 'unixepoch') = '2023-11-14'"), ['launch']);
    assert.deepEqual(await names("strftime('%j', '2026-02-01') = '032'"), ['launch', 'review', 'undated']);
    assert.deepEqual(await names("strftime('%Y') = '1999'"), []);
    const year = String(new Date().getUTCFullYear());
    assert.deepEqual(await names(`strftime('%Y') = '${year}'`), ['launch', 'review', 'undated']);
    // @now is a value like any other.
    assert.deepEqual(await names(`strftime('%Y', @now) = '${year}' && name = 'review'`), ['review']);
  });

  test('through relations: a single one as a value, a multiple one value by value', async () => {
    assert.deepEqual(await names("strftime('%m', main.starts) = '02'"), ['launch']);
    // Any of the slots in January, or all of them.
    assert.deepEqual(await names("strftime('%Y-%m', slots.starts) ?= '2026-01'"), ['launch', 'review']);
    assert.deepEqual(await names("strftime('%Y-%m', slots.starts) = '2026-01'"), ['launch']);
    assert.deepEqual(await names("strftime('%Y-%m', slots.starts) ?= '2026-02'"), ['review']);
  });

  test("in a rule, with the request's value", async () => {
    assert.deepEqual(await names('', 'by_year', '&year=2026'), ['launch', 'review']);
    assert.deepEqual(await names('', 'by_year', '&year=2025'), []);
  });

  test('bad calls are the filter\'s 400', async () => {
    for (const filter of [
      'strftime() = 1',
      "strftime(at, '%Y') = '2026'",
      "strftime(5, at) = '2026'",
      "strftime('%Y', at, 5) = '2026'",
      "strftime('%Y', true) = '2026'",
      "strftime('%Y', at, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i') = '2026'",
      "strftime('%Y', strftime('%Y')) = '2026'",
      "strftime('%Y', nope) = '2026'",
    ]) {
      const res = await list(filter);
      assert.equal(res.status, 400, filter);
      assert.match(res.body.message, /filter/i, filter);
    }
    // A modifier SQLite knows and the PostgreSQL translation does not is said to be so.
    const offset = await list("strftime('%H', at, '+01:00') = '23'");
    if (onPostgres) {
      assert.equal(offset.status, 400);
      assert.match(JSON.stringify(offset.body), /\+01:00.*PostgreSQL/);
    } else {
      assert.deepEqual(offset.body.items.map((r: { name: string }) => r.name), ['launch']);
    }
  });
});
