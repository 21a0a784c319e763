import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

function creates(n: number, title = 't'): { requests: unknown[] } {
  return { requests: Array.from({ length: n }, (_, i) => ({ method: 'POST', url: '/api/collections/items/records', body: { title: `${title}${i}` } })) };
}

describe('the batch settings take effect when saved', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { CAIRN_BATCH_MAX_REQUESTS: '5' } });
    await createCollection(server, { name: 'items', type: 'base', fields: [{ name: 'title', type: 'text' }], createRule: '', listRule: '' });
  });
  after(() => server.close());

  const save = async (batch: Record<string, unknown>) => {
    const res = await server.admin('PATCH', '/api/settings', { body: { batch } });
    assert.equal(res.status, 200, res.text);
    return res.body.batch;
  };

  test('maxRequests: the environment gives the default, a saved value replaces it at once', async () => {
    const shown = await server.admin('GET', '/api/settings');
    assert.equal(shown.body.batch.maxRequests, 5);
    const over = await server.request('POST', '/api/batch', { body: creates(6) });
    assert.equal(over.status, 400, over.text);
    assert.equal((await save({ maxRequests: 300 })).maxRequests, 300);
    const ok = await server.request('POST', '/api/batch', { body: creates(60) });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.length, 60);
    await save({ maxRequests: 2 });
    const refused = await server.request('POST', '/api/batch', { body: creates(3, 'x') });
    assert.equal(refused.status, 400);
    const list = await server.request('GET', '/api/collections/items/records?filter=' + encodeURIComponent("title ~ 'x'"));
    assert.equal(list.body.totalItems, 0);
  });

  test('enabled: false refuses batches with a 403 until enabled again', async () => {
    await save({ enabled: false });
    const off = await server.request('POST', '/api/batch', { body: creates(1) });
    assert.equal(off.status, 403, off.text);
    assert.equal(off.body.message, 'Batch requests are not allowed.');
    await save({ enabled: true, maxRequests: 10 });
    const on = await server.request('POST', '/api/batch', { body: creates(1) });
    assert.equal(on.status, 200, on.text);
  });

  test('maxBodySize: a JSON batch over it is a 413, one under it passes, above the server body limit too', async () => {
    await save({ maxBodySize: 2000, maxRequests: 10 });
    const big = { requests: [{ method: 'POST', url: '/api/collections/items/records', body: { title: 'y'.repeat(3000) } }] };
    const over = await server.request('POST', '/api/batch', { body: big });
    assert.equal(over.status, 413, over.text);
    assert.equal(over.body.code, 413);
    // CAIRN_BODY_LIMIT (1 MiB here) is only the default: a larger saved value lets a larger batch in.
    await save({ maxBodySize: 4 * 1024 * 1024 });
    const large = { requests: [{ method: 'POST', url: '/api/collections/items/records', body: { title: 'z'.repeat(1_500_000) } }] };
    const ok = await server.request('POST', '/api/batch', { body: large });
    assert.equal(ok.status, 200, ok.text.slice(0, 300));
    await save({ maxBodySize: 0 });
    const back = await server.request('POST', '/api/batch', { body: large });
    assert.equal(back.status, 413);
  });

  test('timeout: a batch past it fails and changes nothing', async () => {
    // Auth records hash their passwords: many of them take well over a second.
    await createCollection(server, { name: 'members', type: 'auth', createRule: '' });
    await save({ timeout: 1, maxRequests: 1000 });
    const requests = Array.from({ length: 400 }, (_, i) => ({
      method: 'POST',
      url: '/api/collections/members/records',
      body: { email: `m${i}@example.com`, password: 'member-password-1', passwordConfirm: 'member-password-1' },
    }));
    const started = Date.now();
    const res = await server.request('POST', '/api/batch', { body: { requests } });
    if (Date.now() - started < 1000 && res.status === 200) return; // a machine this fast cannot show it
    assert.equal(res.status, 400, res.text.slice(0, 300));
    const count = await server.admin('GET', '/api/collections/members/records?perPage=1');
    assert.equal(count.body.totalItems, 0);
  });
});
