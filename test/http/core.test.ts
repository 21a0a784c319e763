import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

describe('HTTP core', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('GET /api/health answers guests and users as PocketBase: {message, code, data: {}}', async () => {
    const res = await server.request('GET', '/api/health');
    assert.equal(res.status, 200);
    assert.equal(res.text, '{"message":"API is healthy.","code":200,"data":{}}');
    const user = await server.request('POST', '/api/collections/users/records', { body: { email: 'health@example.com', password: 'password-123', passwordConfirm: 'password-123' } });
    assert.equal(user.status, 200, user.text);
    const signedIn = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'health@example.com', password: 'password-123' } });
    assert.equal(signedIn.status, 200, signedIn.text);
    const asUser = await server.request('GET', '/api/health', { token: signedIn.body.token });
    assert.equal(asUser.text, '{"message":"API is healthy.","code":200,"data":{}}');
  });

  test('an administrator’s health answer adds PocketBase’s superuser fields and Cairn’s, sorted as a map', async () => {
    const admin = await server.admin('GET', '/api/health', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(admin.body.data.canBackup, true);
    assert.equal(admin.body.data.realIP, '127.0.0.1');
    assert.equal(admin.body.data.possibleProxyHeader, 'x-forwarded-for');
    assert.match(admin.body.data.version, /^\d+\.\d+\.\d+/);
    assert.equal(typeof admin.body.data.node, 'string');
    assert.equal(admin.body.data.database.ok, true);
    assert.deepEqual(Object.keys(admin.body.data), ['canBackup', 'database', 'node', 'possibleProxyHeader', 'realIP', 'version']);
  });

  test('an unknown route is a 404 in the error shape', async () => {
    const res = await server.request('GET', '/api/nope');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { status: 404, code: 404, message: "The requested resource wasn't found.", data: {} });
  });

  test('malformed JSON is a 400 without internals', async () => {
    const res = await server.admin('POST', '/api/collections', { raw: '{"name": "x",', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 400);
    assert.deepEqual(res.body.data, {});
    assert.doesNotMatch(res.text, /at .*\.(ts|js)/);
  });

  test('a body over 1 MiB is a 413', async () => {
    const big = JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) });
    const res = await server.admin('POST', '/api/collections', { raw: big, headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 413);
    assert.equal(res.body.code, 413);
  });

  test('a body with an unsupported content type is a 415', async () => {
    const res = await server.admin('POST', '/api/collections', { raw: 'name=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(res.status, 415);
    assert.equal(res.body.code, 415);
  });

  test('prototype pollution in JSON is refused', async () => {
    const res = await server.admin('POST', '/api/collections', { raw: '{"__proto__": {"admin": true}, "name": "p"}', headers: { 'content-type': 'application/json' } });
    assert.equal(res.status, 400);
  });

  test('record endpoints answer malformed JSON with 400 and a 2 MiB body with 413, writing nothing', async () => {
    await server.admin('POST', '/api/collections', { body: { name: 'bodies', fields: [{ name: 'text', type: 'text' }] } });
    const json = { 'content-type': 'application/json' };
    for (const raw of ['{"text": ', '{text: 1}', '{"text": "a"} trailing', '\u0000']) {
      const res = await server.admin('POST', '/api/collections/bodies/records', { raw, headers: json });
      assert.equal(res.status, 400, raw);
      assert.deepEqual(Object.keys(res.body).sort(), ['code', 'data', 'message', 'status']);
    }
    const big = await server.admin('POST', '/api/collections/bodies/records', { raw: JSON.stringify({ text: 'x'.repeat(2 * 1024 * 1024) }), headers: json });
    assert.equal(big.status, 413);
    assert.equal(big.body.code, 413);
    const list = await server.admin('GET', '/api/collections/bodies/records');
    assert.equal(list.body.totalItems, 0);
    const charset = await server.admin('POST', '/api/collections/bodies/records', { raw: '{"text":"ok"}', headers: { 'content-type': 'application/json; charset=utf-8' } });
    assert.equal(charset.status, 200);
  });

  test('a wrong method on a known path is a 404 in the error shape', async () => {
    const res = await server.request('PUT', '/api/health');
    assert.equal(res.status, 404);
    assert.equal(res.body.code, 404);
  });

  test('a path segment longer than any name or id is a 404, a malformed URL a 400, both in the error shape', async () => {
    const long = await server.admin('GET', `/api/collections/${'x'.repeat(5000)}/records`);
    assert.equal(long.status, 404);
    assert.deepEqual(long.body, { status: 404, code: 404, message: "The requested resource wasn't found.", data: {} });
    const malformed = await server.admin('GET', '/api/collections/%E0%A4%A/records');
    assert.equal(malformed.status, 400);
    assert.deepEqual(Object.keys(malformed.body).sort(), ['code', 'data', 'message', 'status']);
  });
});
