import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createUser, request, startServer, type TestServer } from '../helpers/server.ts';

/** A request with a raw Authorization header (a key or token, with or without `Bearer `). */
function as(server: TestServer, method: string, path: string, authorization: string, options: { db?: string; body?: unknown } = {}) {
  return request(server.url, method, path, { ...options, headers: { authorization } });
}

describe('API keys', () => {
  let server: TestServer;
  let userToken: string;

  before(async () => {
    server = await startServer();
    userToken = (await createUser(server, 'keys-user@example.com')).token;
    const db = await server.admin('POST', '/api/databases', { body: { name: 'other' } });
    assert.equal(db.status, 200, db.text);
  });
  after(() => server.close());

  test('creation answers the key once, with a token naming the key id', async () => {
    const res = await server.admin('POST', '/api/keys', { body: { name: 'billing', enabled: true, roles: 'service' } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['created', 'enabled', 'id', 'key', 'name', 'roles', 'token', 'updated']);
    assert.equal(res.body.name, 'billing');
    assert.equal(res.body.enabled, true);
    assert.deepEqual(res.body.roles, ['service']);
    assert.match(res.body.id, /^[a-z0-9]{15}$/);
    assert.match(res.body.key, /^cairn_[A-Za-z0-9_-]{43}$/);
    const claims = JSON.parse(Buffer.from(res.body.token.split('.')[1], 'base64url').toString());
    assert.equal(claims.id, res.body.id);
    assert.equal(claims.type, 'apikey');
    assert.equal(claims.db, 'main');

    const listed = await server.admin('GET', '/api/keys');
    assert.equal(listed.status, 200);
    const item = listed.body.items.find((k: { id: string }) => k.id === res.body.id);
    assert.deepEqual(Object.keys(item).sort(), ['created', 'enabled', 'id', 'name', 'roles', 'updated']);
    assert.ok(!listed.text.includes(res.body.key), 'the key is never listed');
    const one = await server.admin('GET', `/api/keys/${res.body.id}`);
    assert.equal(one.status, 200);
    assert.equal(one.body.key, undefined);
  });

  test('the key is stored only as a hash', async () => {
    const res = await server.admin('POST', '/api/keys', { body: { name: 'stored' } });
    const db = await server.services.registry.get('main');
    const rows = await db.all<Record<string, unknown>>('SELECT * FROM _api_keys WHERE id = ?', [res.body.id]);
    assert.equal(rows.length, 1);
    for (const value of Object.values(rows[0])) assert.ok(!String(value).includes(res.body.key.slice(6)), 'no column holds the key');
  });

  test('roles: a string, a comma list or an array; enabled defaults to true', async () => {
    const list = await server.admin('POST', '/api/keys', { body: { name: 'multi', roles: 'admin, reports' } });
    assert.deepEqual(list.body.roles, ['admin', 'reports']);
    const arr = await server.admin('POST', '/api/keys', { body: { name: 'arr', roles: ['a', 'b', 'a'] } });
    assert.deepEqual(arr.body.roles, ['a', 'b']);
    assert.equal(arr.body.enabled, true);
    const none = await server.admin('POST', '/api/keys', { body: { name: 'none' } });
    assert.deepEqual(none.body.roles, []);
  });

  test('invalid input is a 400 naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: 'x'.repeat(300) }, 'name'],
      [{ name: 'k', enabled: 'yes' }, 'enabled'],
      [{ name: 'k', roles: 5 }, 'roles'],
      [{ name: 'k', roles: ['ok', 7] }, 'roles'],
      [{ name: 'k', roles: "admin'; DROP TABLE _api_keys; --" }, 'roles'],
    ];
    for (const [body, field] of cases) {
      const res = await server.admin('POST', '/api/keys', { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.code, 400);
      assert.ok(res.body.data[field], `${JSON.stringify(body)} → ${res.text}`);
    }
    const arrayBody = await server.admin('POST', '/api/keys', { body: [] });
    assert.equal(arrayBody.status, 400);
    const malformed = await server.admin('POST', '/api/keys', { raw: '{"name":', headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
    const missing = await server.admin('PATCH', '/api/keys/nosuchkey000000', { body: { name: 'x' } });
    assert.equal(missing.status, 404);
    assert.equal((await server.admin('POST', '/api/keys/nosuchkey000000/rotate')).status, 404);
    assert.equal((await server.admin('DELETE', '/api/keys/nosuchkey000000')).status, 404);
  });

  test('only administrators and admin-role keys manage keys', async () => {
    const plain = await server.admin('POST', '/api/keys', { body: { name: 'plain', roles: 'service' } });
    const adminKey = await server.admin('POST', '/api/keys', { body: { name: 'root', roles: ['admin'] } });

    assert.equal((await server.request('POST', '/api/keys', { body: { name: 'x' } })).status, 401);
    assert.equal((await server.request('GET', '/api/keys', { token: userToken })).status, 403);
    assert.equal((await as(server, 'GET', '/api/keys', `Bearer ${plain.body.key}`)).status, 403);
    assert.equal((await as(server, 'GET', '/api/keys', `Bearer ${plain.body.token}`)).status, 403);

    const byKey = await as(server, 'POST', '/api/keys', `Bearer ${adminKey.body.key}`, { body: { name: 'made-by-key' } });
    assert.equal(byKey.status, 200, byKey.text);
    assert.equal((await as(server, 'GET', '/api/collections', adminKey.body.token)).status, 200, 'the token works without "Bearer "');
    assert.equal((await as(server, 'GET', '/api/collections', adminKey.body.key)).status, 200, 'the key works without "Bearer "');
  });

  test('create → use → rotate: the old key and token are refused, the new ones work', async () => {
    const created = await server.admin('POST', '/api/keys', { body: { name: 'rotating', roles: 'admin' } });
    const { id, key, token } = created.body;
    assert.equal((await as(server, 'GET', '/api/keys', `Bearer ${key}`)).status, 200);
    assert.equal((await as(server, 'GET', '/api/keys', `Bearer ${token}`)).status, 200);

    const rotated = await server.admin('POST', `/api/keys/${id}/rotate`);
    assert.equal(rotated.status, 200, rotated.text);
    assert.equal(rotated.body.id, id);
    assert.notEqual(rotated.body.key, key);
    assert.notEqual(rotated.body.token, token);

    for (const old of [key, token]) {
      const res = await as(server, 'GET', '/api/keys', `Bearer ${old}`);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { status: 401, code: 401, message: 'The request requires valid authorization token.', data: {} });
    }
    assert.equal((await as(server, 'GET', '/api/keys', `Bearer ${rotated.body.key}`)).status, 200);
    assert.equal((await as(server, 'GET', '/api/keys', `Bearer ${rotated.body.token}`)).status, 200);
  });

  test('a disabled key is refused until enabled again; a deleted one for good', async () => {
    const created = await server.admin('POST', '/api/keys', { body: { name: 'toggle', roles: 'admin' } });
    const { id, key, token } = created.body;

    const disabled = await server.admin('PATCH', `/api/keys/${id}`, { body: { enabled: false, name: 'toggled', roles: ['admin', 'x'] } });
    assert.equal(disabled.status, 200, disabled.text);
    assert.deepEqual([disabled.body.enabled, disabled.body.name, disabled.body.roles], [false, 'toggled', ['admin', 'x']]);
    assert.equal((await as(server, 'GET', '/api/collections', `Bearer ${key}`)).status, 401);
    assert.equal((await as(server, 'GET', '/api/collections', `Bearer ${token}`)).status, 401);

    await server.admin('PATCH', `/api/keys/${id}`, { body: { enabled: true } });
    assert.equal((await as(server, 'GET', '/api/collections', `Bearer ${key}`)).status, 200);
    assert.equal((await as(server, 'GET', '/api/collections', `Bearer ${token}`)).status, 200);

    // Dropping the admin role turns management access into a 403 at once.
    await server.admin('PATCH', `/api/keys/${id}`, { body: { roles: 'reader' } });
    assert.equal((await as(server, 'GET', '/api/collections', `Bearer ${key}`)).status, 403);

    assert.equal((await server.admin('DELETE', `/api/keys/${id}`)).status, 204);
    assert.equal((await as(server, 'GET', '/api/collections', `Bearer ${key}`)).status, 401);
    assert.equal((await as(server, 'GET', '/api/collections', `Bearer ${token}`)).status, 401);
    assert.equal((await server.admin('GET', `/api/keys/${id}`)).status, 404);
  });

  test('a key and its token work only in the database they were created in', async () => {
    const created = await server.admin('POST', '/api/keys', { body: { name: 'bound', roles: 'admin' } });
    for (const bearer of [created.body.key, created.body.token]) {
      assert.equal((await as(server, 'GET', '/api/collections', `Bearer ${bearer}`, { db: 'main' })).status, 200);
      const res = await as(server, 'GET', '/api/collections', `Bearer ${bearer}`, { db: 'other' });
      assert.equal(res.status, 401);
      assert.equal(res.body.message, 'The request requires valid authorization token.');
    }
    // Keys of `other` are listed there, not in main.
    const there = await server.admin('POST', '/api/keys', { body: { name: 'there' }, db: 'other' });
    assert.equal(there.status, 200);
    assert.equal(JSON.parse(Buffer.from(there.body.token.split('.')[1], 'base64url').toString()).db, 'other');
    const mainList = await server.admin('GET', '/api/keys?perPage=500');
    assert.ok(!mainList.body.items.some((k: { id: string }) => k.id === there.body.id));
  });

  test('unknown keys and garbage bearers are 401, never a guest', async () => {
    for (const bearer of ['cairn_' + 'A'.repeat(43), 'not-a-key', "' OR 1=1 --", 'Bearer']) {
      const res = await as(server, 'GET', '/api/collections/users/records', `Bearer ${bearer}`);
      assert.equal(res.status, 401, bearer);
      assert.deepEqual(res.body, { status: 401, code: 401, message: 'The request requires valid authorization token.', data: {} });
    }
  });
});
