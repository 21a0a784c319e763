import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { tally } from '../helpers/tally.ts';

/**
 * The same schema change sent several times at once is decided as if the requests came one after
 * the other: one succeeds, the rest get the answer a second request would get (never a 500), and the
 * schema is what one change makes.
 */
describe('collections: the same change sent at once', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('creates of one name: one 200, the others the 400 of a taken name', async () => {
    const replies = await Promise.all(Array.from({ length: 8 }, () => server.admin('POST', '/api/collections', { body: { name: 'twins', fields: [{ name: 'title', type: 'text' }] } })));
    assert.deepEqual(tally(replies), { 200: 1, 400: 7 }, replies.map((r) => r.text).join('\n'));
    for (const r of replies.filter((r) => r.status === 400)) assert.equal(r.body.data.name.code, 'validation_collection_name_exists');
    const list = await server.admin('GET', `/api/collections?filter=${encodeURIComponent('name = "twins"')}`);
    assert.equal(list.body.totalItems, 1);
  });

  test('updates adding one field: each 200 (the field is matched by name, as one after the other), the field there once', async () => {
    const made = await server.admin('POST', '/api/collections', { body: { name: 'grows', fields: [{ name: 'title', type: 'text' }] } });
    assert.equal(made.status, 200, made.text);
    const fields = [...made.body.fields, { name: 'extra', type: 'number' }];
    const replies = await Promise.all(Array.from({ length: 6 }, () => server.admin('PATCH', '/api/collections/grows', { body: { fields } })));
    assert.deepEqual(tally(replies), { 200: 6 }, replies.map((r) => r.text).join('\n'));
    const now = (await server.admin('GET', '/api/collections/grows')).body;
    assert.deepEqual(now.fields.filter((f: { name: string }) => f.name === 'extra').length, 1);
    const record = await server.admin('POST', '/api/collections/grows/records', { body: { title: 'a', extra: 3 } });
    assert.equal(record.body.extra, 3, record.text);
  });

  test('updates each giving a different field list: each 200, the last one the collection', async () => {
    const made = await server.admin('POST', '/api/collections', { body: { name: 'widens', fields: [{ name: 'title', type: 'text' }] } });
    const names = ['a1', 'a2', 'a3', 'a4', 'a5'];
    const replies = await Promise.all(names.map((name) => server.admin('PATCH', '/api/collections/widens', { body: { fields: [...made.body.fields, { name, type: 'text' }] } })));
    assert.deepEqual(tally(replies), { 200: 5 }, replies.map((r) => r.text).join('\n'));
    // A field list replaces the one before: one of the five stays, its table column with it.
    const now = (await server.admin('GET', '/api/collections/widens')).body;
    const kept = now.fields.map((f: { name: string }) => f.name).filter((n: string) => names.includes(n));
    assert.equal(kept.length, 1, String(kept));
    const record = await server.admin('POST', '/api/collections/widens/records', { body: { title: 't', [kept[0]]: 'v' } });
    assert.equal(record.body[kept[0]], 'v', record.text);
  });

  test('deletes of one collection: one 204, the others 404', async () => {
    assert.equal((await server.admin('POST', '/api/collections', { body: { name: 'doomed', fields: [{ name: 'title', type: 'text' }] } })).status, 200);
    const replies = await Promise.all(Array.from({ length: 6 }, () => server.admin('DELETE', '/api/collections/doomed')));
    assert.deepEqual(tally(replies), { 204: 1, 404: 5 }, replies.map((r) => r.text).join('\n'));
  });

  test('the same import five times: every one 200, the collections once', async () => {
    const body = {
      collections: [
        { name: 'imp_a', type: 'base', fields: [{ name: 'title', type: 'text' }] },
        { name: 'imp_b', type: 'base', fields: [{ name: 'a', type: 'relation', collectionId: 'imp_a', maxSelect: 1 }] },
      ],
    };
    const replies = await Promise.all(Array.from({ length: 5 }, () => server.admin('PUT', '/api/collections/import', { body })));
    assert.deepEqual(tally(replies), { 204: 5 }, replies.map((r) => r.text).join('\n'));
    const list = await server.admin('GET', `/api/collections?filter=${encodeURIComponent('name ~ "imp_"')}`);
    assert.deepEqual(list.body.items.map((c: { name: string }) => c.name).sort(), ['imp_a', 'imp_b']);
  });

  test('workflows of one name: one 200, the others 409', async () => {
    const body = { name: 'same-flow', secret: 'a-long-enough-secret-value', steps: [{ type: 'create_record', collection: 'twins', data: { title: '{{event.title}}' } }] };
    const replies = await Promise.all(Array.from({ length: 5 }, () => server.admin('POST', '/api/workflows', { body })));
    assert.deepEqual(tally(replies), { 200: 1, 409: 4 }, replies.map((r) => r.text).join('\n'));
  });
});
