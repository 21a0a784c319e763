import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { tally } from '../helpers/tally.ts';

/**
 * Writes sent at once that change the same records: each is decided on what the ones before it left,
 * as if they had come one after the other, and none ends in a 500 (on PostgreSQL, where writes run
 * side by side: a deadlock between two of them used to be one).
 */
describe('records: writes racing on the same records', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'targets', fields: [{ name: 'title', type: 'text' }] });
    await createCollection(server, {
      name: 'holders',
      fields: [
        { name: 'rel', type: 'relation', options: { collectionId: 'targets', maxSelect: 10 } },
        { name: 'count', type: 'number' },
      ],
    });
  });
  after(() => server.close());

  const create = async (collection: string, body: Record<string, unknown>): Promise<string> => {
    const res = await server.admin('POST', `/api/collections/${collection}/records`, { body });
    assert.equal(res.status, 200, res.text);
    return res.body.id;
  };
  const holder = async (id: string) => (await server.admin('GET', `/api/collections/holders/records/${id}`)).body;

  test('deletes of two records the same records point at: each reference cleared, none left dangling', async () => {
    for (let round = 0; round < 4; round++) {
      const t1 = await create('targets', { title: 'one' });
      const t2 = await create('targets', { title: 'two' });
      const holders = await Promise.all(Array.from({ length: 4 }, () => create('holders', { rel: [t1, t2] })));
      const deletes = await Promise.all([t1, t2].map((t) => server.admin('DELETE', `/api/collections/targets/records/${t}`)));
      assert.deepEqual(tally(deletes), { 204: 2 }, deletes.map((r) => r.text).join('\n'));
      for (const id of holders) assert.deepEqual((await holder(id)).rel, [], `round ${round}`);
    }
  });

  test('PATCHes of the holders racing a delete of what they point at: no change lost, no reference left', async () => {
    for (let round = 0; round < 3; round++) {
      const [t1, t2, t3] = await Promise.all(['a', 'b', 'c'].map((title) => create('targets', { title })));
      const holders = await Promise.all(Array.from({ length: 8 }, () => create('holders', { rel: [t1, t2, t3], count: 0 })));
      const replies = await Promise.all([
        ...holders.map((id) => server.admin('PATCH', `/api/collections/holders/records/${id}`, { body: { 'rel-': t2, 'count+': 1 } })),
        server.admin('DELETE', `/api/collections/targets/records/${t1}`),
      ]);
      // The delete locks what points at its record before the record, as a PATCH locks its record
      // before what it points at: they wait for each other instead of deadlocking.
      assert.deepEqual(tally(replies), { 200: 8, 204: 1 }, replies.map((r) => r.text).join('\n'));
      assert.equal((await server.admin('GET', `/api/collections/targets/records/${t1}`)).status, replies.at(-1)!.status === 204 ? 404 : 200);
      for (const [i, id] of holders.entries()) {
        const h = await holder(id);
        const patched = replies[i].status === 200;
        assert.equal(h.count, patched ? 1 : 0, `round ${round}, holder ${i}`);
        const expected = [replies.at(-1)!.status === 204 ? undefined : t1, patched ? undefined : t2, t3].filter(Boolean);
        assert.deepEqual([...h.rel].sort(), expected.sort(), `round ${round}, holder ${i}`);
      }
    }
  });

  test('records made to point at each other at once: every PATCH applied', async () => {
    await createCollection(server, { name: 'links', fields: [{ name: 'to', type: 'relation', options: { collectionId: 'links', maxSelect: 10 } }] });
    for (let round = 0; round < 5; round++) {
      const ring = await Promise.all(Array.from({ length: 4 }, () => create('links', {})));
      const replies = await Promise.all(ring.map((id, i) => server.admin('PATCH', `/api/collections/links/records/${id}`, { body: { 'to+': ring[(i + 1) % ring.length] } })));
      assert.deepEqual(tally(replies), { 200: 4 }, replies.map((r) => r.text).join('\n'));
    }
  });

  test('batches changing the same two records in opposite orders: every batch applied', async () => {
    const a = await create('holders', { count: 0 });
    const b = await create('holders', { count: 0 });
    const patch = (id: string) => ({ method: 'PATCH', url: `/api/collections/holders/records/${id}`, body: { 'count+': 1 } });
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all(Array.from({ length: 16 }, (_, i) => server.admin('POST', '/api/batch', { body: { requests: i % 2 === 0 ? [patch(a), patch(b)] : [patch(b), patch(a)] } })));
      assert.deepEqual(tally(replies), { 200: 16 }, replies.map((r) => r.text).join('\n'));
    }
    assert.equal((await holder(a)).count, 48);
    assert.equal((await holder(b)).count, 48);
  });
});
