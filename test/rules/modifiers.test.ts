import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

/** PocketBase ≥ 0.23's `:changed` and `:lower` modifiers, and `fields=…:excerpt(max, withEllipsis)`. */
describe('filter modifiers and the excerpt', () => {
  let server: TestServer;
  let token: string;
  let ownerId: string;

  before(async () => {
    server = await startServer();
    const user = await createUser(server, 'changer@example.com');
    token = user.token;
    ownerId = user.id;
    await createCollection(server, {
      name: 'tickets',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'status', type: 'select', options: { values: ['open', 'closed'], maxSelect: 1 } },
        { name: 'owner', type: 'relation', options: { toCollection: 'users', maxSelect: 1 } },
        { name: 'body', type: 'editor' },
      ],
      listRule: '',
      viewRule: '',
      createRule: '@request.body.title:lower != "forbidden"',
      // The owner edits a ticket but may not change its status.
      updateRule: 'owner = @request.auth.id && @request.body.status:changed = false',
    });
  });
  after(() => server.close());

  test('@request.body.f:changed = false lets a field through unchanged or absent, not changed', async () => {
    const ticket = (await server.admin('POST', '/api/collections/tickets/records', { body: { title: 'a', status: 'open', owner: ownerId } })).body;
    const path = `/api/collections/tickets/records/${ticket.id}`;
    assert.equal((await server.request('PATCH', path, { token, body: { title: 'b' } })).status, 200, 'absent');
    assert.equal((await server.request('PATCH', path, { token, body: { title: 'c', status: 'open' } })).status, 200, 'sent unchanged');
    const changed = await server.request('PATCH', path, { token, body: { status: 'closed' } });
    assert.equal(changed.status, 404);
    assert.equal((await server.admin('GET', path)).body.status, 'open', 'nothing changed');
  });

  test(':changed = true, != false and its misuse', async () => {
    await createCollection(server, { name: 'audited', fields: [{ name: 'n', type: 'number' }], listRule: '', viewRule: '', createRule: '', updateRule: '@request.body.n:changed != false' });
    const rec = (await server.request('POST', '/api/collections/audited/records', { body: { n: 1 } })).body;
    const path = `/api/collections/audited/records/${rec.id}`;
    assert.equal((await server.request('PATCH', path, { body: { n: 1 } })).status, 404, 'the same value is no change');
    assert.equal((await server.request('PATCH', path, { body: { n: '2' } })).status, 200, 'compared as the field stores it');
    for (const rule of ['@request.body.n:changed > 1', '@request.body.n:changed = "x"', 'n:changed = true', '@request.auth.id:changed = true', '@request.body.nope:changed = true']) {
      const res = await server.admin('PATCH', '/api/collections/audited', { body: { updateRule: rule } });
      assert.equal(res.status, 400, rule);
      assert.ok(res.body.data.updateRule, rule);
    }
  });

  test(':lower on fields and on @request.body', async () => {
    await server.admin('POST', '/api/collections/tickets/records', { body: { title: 'MiXeD Case' } });
    const found = await server.request('GET', `/api/collections/tickets/records?filter=${encodeURIComponent('title:lower = "mixed case"')}`);
    assert.equal(found.body.totalItems, 1);
    const refused = await server.request('POST', '/api/collections/tickets/records', { body: { title: 'ForBidden' } });
    assert.equal(refused.status, 400);
    assert.equal((await server.request('POST', '/api/collections/tickets/records', { body: { title: 'allowed' } })).status, 200);
  });

  test("fields=…:excerpt(max, withEllipsis) reads HTML as PocketBase does", async () => {
    const html = '<style>p{}</style><p>Hello <b>wo</b>rld &amp; <em>more</em></p><script>x()</script><div>next  line</div>';
    const rec = (await server.admin('POST', '/api/collections/tickets/records', { body: { title: 'html', body: html } })).body;
    const get = async (fields: string) => (await server.request('GET', `/api/collections/tickets/records/${rec.id}?fields=${encodeURIComponent(fields)}`)).body;
    assert.deepEqual(await get('body:excerpt(100)'), { body: 'Hello world & more next line' });
    assert.deepEqual(await get('id,body:excerpt(6,true)'), { id: rec.id, body: 'Hello...' }, 'cut, trimmed, then the ellipsis');
    assert.deepEqual(await get('body:excerpt(5, t)'), { body: 'Hello...' }, "Go's boolean spellings");
    assert.deepEqual(await get('body:excerpt(5,false)'), { body: 'Hello' });
    const list = await server.request('GET', `/api/collections/tickets/records?filter=${encodeURIComponent(`id="${rec.id}"`)}&fields=${encodeURIComponent('*,body:excerpt(3)')}`);
    assert.equal(list.body.items[0].body, 'Hel');
    assert.equal(list.body.items[0].title, 'html');
    for (const bad of ['body:excerpt(0)', 'body:excerpt(x)', 'body:excerpt()']) {
      const res = await server.request('GET', `/api/collections/tickets/records/${rec.id}?fields=${encodeURIComponent(bad)}`);
      assert.equal(res.status, 400, bad);
    }
  });
});
