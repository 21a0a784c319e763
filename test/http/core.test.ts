import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

describe('HTTP core', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('GET /api/health answers with the version', async () => {
    const res = await server.request('GET', '/api/health');
    assert.equal(res.status, 200);
    assert.equal(res.body.code, 200);
    assert.equal(res.body.message, 'API is healthy.');
    assert.match(res.body.data.version, /^\d+\.\d+\.\d+/);
  });

  test('an administrator’s health answer adds PocketBase’s superuser fields; others do not see them', async () => {
    const admin = await server.admin('GET', '/api/health', { headers: { 'x-forwarded-for': '203.0.113.9' } });
    assert.equal(admin.body.data.canBackup, true);
    assert.equal(admin.body.data.realIP, '127.0.0.1');
    assert.equal(admin.body.data.possibleProxyHeader, 'x-forwarded-for');
    const guest = await server.request('GET', '/api/health');
    assert.equal(guest.body.data.canBackup, undefined);
    assert.equal(guest.body.data.realIP, undefined);
  });

  test('an unknown route is a 404 in the error shape', async () => {
    const res = await server.request('GET', '/api/nope');
    assert.equal(res.status, 404);
    assert.deepEqual(res.body, { code: 404, message: "The requested resource wasn't found.", data: {} });
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
      assert.deepEqual(Object.keys(res.body).sort(), ['code', 'data', 'message']);
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
    assert.deepEqual(long.body, { code: 404, message: "The requested resource wasn't found.", data: {} });
    const malformed = await server.admin('GET', '/api/collections/%E0%A4%A/records');
    assert.equal(malformed.status, 400);
    assert.deepEqual(Object.keys(malformed.body).sort(), ['code', 'data', 'message']);
  });
});
