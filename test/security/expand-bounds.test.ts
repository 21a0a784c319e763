import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

const DEEP = 'links.links.links.links.links.links';

/**
 * Security invariant "expand is bounded by work, not only depth" (API contract §20, issue 36 hole 5):
 * records all related to each other make a 6-level expand exponential in size (six records: 93 MB,
 * nine: 1.4 GB and a blocked event loop). A guest's worst cyclic expand answers 400 in milliseconds.
 */
describe('expand is bounded by records and bytes', () => {
  let server: TestServer;
  let small: string[];

  async function clique(name: string, n: number, extra: Record<string, unknown> = {}): Promise<string[]> {
    const c = await createCollection(server, { name, listRule: '', viewRule: '', fields: [{ name: 'title', type: 'text' }] });
    const patched = await server.admin('PATCH', `/api/collections/${name}`, {
      body: { fields: [...c.fields, { name: 'links', type: 'relation', options: { toCollection: name, maxSelect: 50 } }] },
    });
    assert.equal(patched.status, 200, patched.text);
    const ids: string[] = [];
    for (let i = 0; i < n; i++) ids.push((await server.admin('POST', `/api/collections/${name}/records`, { body: { title: `record ${i}`, ...extra } })).body.id);
    for (const id of ids) assert.equal((await server.admin('PATCH', `/api/collections/${name}/records/${id}`, { body: { links: ids } })).status, 200);
    return ids;
  }

  before(async () => {
    server = await startServer();
    small = await clique('six', 6);
    await clique('nine', 9);
  });
  after(() => server.close());

  // How fast the refusal is, is measured by `npm run bench -- expand-cyclic-refused`, not asserted here.
  test("a guest's cyclic 6-level expand answers 400 naming expand, on lists and views", async () => {
    for (const path of [`/api/collections/six/records?expand=${DEEP}`, `/api/collections/nine/records?expand=${DEEP}`, `/api/collections/six/records/${small[0]}?expand=${DEEP}`]) {
      const res = await server.request('GET', path);
      assert.equal(res.status, 400, `${path}: ${res.status} ${res.text.slice(0, 200)}`);
      assert.match(res.body.message, /expand/i);
      assert.equal(res.body.data.expand.code, 'validation_expand_too_large');
    }
    // The server still answers at once.
    assert.equal((await server.request('GET', '/api/health')).status, 200);
  });

  test('ordinary expands keep working, a record related from several places is shown in each', async () => {
    const res = await server.request('GET', `/api/collections/six/records/${small[0]}?expand=links.links`);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.expand.links.length, 6);
    assert.equal(res.body.expand.links[1].expand.links.length, 6);
    const list = await server.request('GET', '/api/collections/six/records?expand=links');
    assert.equal(list.status, 200);
    assert.equal(list.body.items.length, 6);
  });

  test('the bounds follow CAIRN_EXPAND_MAX_RECORDS and CAIRN_MAX_ANSWER_MB', async () => {
    const tight = await startServer({ env: { CAIRN_EXPAND_MAX_RECORDS: '30' } });
    try {
      const c = await createCollection(tight, { name: 'six', listRule: '', viewRule: '', fields: [{ name: 'title', type: 'text' }] });
      await tight.admin('PATCH', '/api/collections/six', { body: { fields: [...c.fields, { name: 'links', type: 'relation', options: { toCollection: 'six', maxSelect: 50 } }] } });
      const ids: string[] = [];
      for (let i = 0; i < 6; i++) ids.push((await tight.admin('POST', '/api/collections/six/records', { body: { title: `r${i}` } })).body.id);
      for (const id of ids) await tight.admin('PATCH', `/api/collections/six/records/${id}`, { body: { links: ids } });
      // One record, one level: 6 expanded records; two levels: 6 + 36 = 42 > 30.
      assert.equal((await tight.request('GET', `/api/collections/six/records/${ids[0]}?expand=links`)).status, 200);
      const over = await tight.request('GET', `/api/collections/six/records/${ids[0]}?expand=links.links`);
      assert.equal(over.status, 400);
      assert.match(over.body.message, /30 records/);
    } finally {
      await tight.close();
    }
    const bytes = await startServer({ env: { CAIRN_MAX_ANSWER_MB: '1' } });
    try {
      const c = await createCollection(bytes, { name: 'big', listRule: '', viewRule: '', fields: [{ name: 'title', type: 'text', options: { max: 100000 } }] });
      await bytes.admin('PATCH', '/api/collections/big', { body: { fields: [...c.fields, { name: 'links', type: 'relation', options: { toCollection: 'big', maxSelect: 50 } }] } });
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push((await bytes.admin('POST', '/api/collections/big/records', { body: { title: 'x'.repeat(50000) } })).body.id);
      for (const id of ids) await bytes.admin('PATCH', `/api/collections/big/records/${id}`, { body: { links: ids } });
      // 4 + 16 expanded records of 50 kB on each of 4 records: about 4 MB.
      const over = await bytes.request('GET', '/api/collections/big/records?expand=links.links');
      assert.equal(over.status, 400, over.text.slice(0, 200));
      assert.match(over.body.message, /1 MB/);
      assert.equal((await bytes.request('GET', `/api/collections/big/records/${ids[0]}?expand=links`)).status, 200);
    } finally {
      await bytes.close();
    }
  });
});
