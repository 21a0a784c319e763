import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

/**
 * Security invariant "hidden fields are written by superusers only" (API contract §20, issue 36
 * hole 4): an ordinary user's value for a hidden field is ignored on create and update, as
 * PocketBase ≥ 0.23 does (apis/record_crud.go drops hidden fields from a non-superuser's body).
 */
describe('hidden fields are written by administrators only', () => {
  let server: TestServer;
  let user: { token: string; id: string };

  before(async () => {
    server = await startServer();
    user = await createUser(server, 'mallory@example.com');
    await createCollection(server, {
      name: 'accounts',
      fields: [
        { name: 'owner', type: 'text' },
        { name: 'name', type: 'text' },
        { name: 'plan', type: 'text', hidden: true },
        { name: 'quota', type: 'number', hidden: true },
      ],
      viewRule: 'owner = @request.auth.id',
      createRule: '@request.auth.id != ""',
      updateRule: 'owner = @request.auth.id',
    });
  });
  after(() => server.close());

  const plan = async (id: string) => {
    const r = (await server.admin('GET', `/api/collections/accounts/records/${id}`)).body;
    return [r.plan, r.quota];
  };

  test("a user's create keeps the default of a hidden field, JSON and multipart", async () => {
    const res = await server.request('POST', '/api/collections/accounts/records', { token: user.token, body: { owner: user.id, name: 'a', plan: 'gold', quota: 1000 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.plan, undefined);
    assert.deepEqual(await plan(res.body.id), ['', 0]);
    const form = new FormData();
    form.append('owner', user.id);
    form.append('plan', 'enterprise');
    form.append('quota+', '50');
    const multipart = await server.request('POST', '/api/collections/accounts/records', { token: user.token, raw: form });
    assert.equal(multipart.status, 200, multipart.text);
    assert.deepEqual(await plan(multipart.body.id), ['', 0]);
  });

  test("a user's update keeps the stored value of a hidden field, plain, modifier, @jsonPayload or batch", async () => {
    const id = (await server.admin('POST', '/api/collections/accounts/records', { body: { owner: user.id, plan: 'free', quota: 10 } })).body.id;
    const url = `/api/collections/accounts/records/${id}`;
    const res = await server.request('PATCH', url, { token: user.token, body: { name: 'b', plan: 'gold', 'quota+': 1000 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'b');
    const payload = new FormData();
    payload.append('@jsonPayload', JSON.stringify({ plan: 'enterprise', quota: 99 }));
    assert.equal((await server.request('PATCH', url, { token: user.token, raw: payload })).status, 200);
    const batch = await server.request('POST', '/api/batch', { token: user.token, body: { requests: [{ method: 'PATCH', url, body: { plan: 'enterprise', quota: 5000 } }] } });
    assert.equal(batch.status, 200, batch.text);
    assert.deepEqual(await plan(id), ['free', 10]);
  });

  test('an administrator writes hidden fields', async () => {
    const res = await server.admin('POST', '/api/collections/accounts/records', { body: { owner: user.id, plan: 'gold', quota: 3 } });
    assert.equal(res.status, 200, res.text);
    assert.equal((await server.admin('PATCH', `/api/collections/accounts/records/${res.body.id}`, { body: { 'quota+': 2 } })).status, 200);
    assert.deepEqual(await plan(res.body.id), ['gold', 5]);
  });
});
