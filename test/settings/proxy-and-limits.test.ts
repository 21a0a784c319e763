import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { findRule, type RateLimitRule } from '../../src/http/plugins/rate-limit-rules.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

describe('the trustedProxy and rateLimits settings take effect when saved', () => {
  let server: TestServer;
  before(async () => {
    // CAIRN_RATE_LIMIT is off for test servers: saved rules apply all the same.
    server = await startServer();
    await createCollection(server, { name: 'items', type: 'base', fields: [{ name: 'title', type: 'text' }], createRule: '', listRule: '' });
  });
  after(() => server.close());

  const save = async (body: Record<string, unknown>) => {
    const res = await server.admin('PATCH', '/api/settings', { body });
    assert.equal(res.status, 200, res.text);
  };
  const realIp = async (headers: Record<string, string>) => (await server.admin('GET', '/api/health', { headers })).body.data.realIP;

  test('trustedProxy: headers and useLeftmostIP decide the client address', async () => {
    const xff = { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' };
    assert.equal(await realIp(xff), '127.0.0.1');
    await save({ trustedProxy: { headers: ['X-Forwarded-For'], useLeftmostIP: false } });
    assert.equal(await realIp(xff), '198.51.100.7');
    await save({ trustedProxy: { useLeftmostIP: true } });
    assert.equal(await realIp(xff), '203.0.113.9');
    await save({ trustedProxy: { headers: ['X-Real-IP', 'X-Forwarded-For'] } });
    assert.equal(await realIp({ 'x-real-ip': '192.0.2.44', ...xff }), '192.0.2.44');
    assert.equal(await realIp({ 'x-real-ip': 'not-an-ip' }), '127.0.0.1');
    await save({ trustedProxy: { headers: [] } });
    assert.equal(await realIp(xff), '127.0.0.1');
  });

  test('rateLimits: a path rule limits per client address; excluded addresses and enabled:false lift it', async () => {
    await save({ trustedProxy: { headers: ['X-Forwarded-For'], useLeftmostIP: false } });
    await save({ rateLimits: { enabled: true, rules: [{ label: '/api/health', audience: '', duration: 60, maxRequests: 3 }], excludedIPs: [] } });
    const from = (ip: string) => server.request('GET', '/api/health', { headers: { 'x-forwarded-for': ip } });
    for (let i = 0; i < 3; i++) assert.equal((await from('198.51.100.1')).status, 200);
    const limited = await from('198.51.100.1');
    assert.equal(limited.status, 429);
    assert.equal(limited.body.code, 429);
    assert.equal((await from('198.51.100.2')).status, 200);
    await save({ rateLimits: { excludedIPs: ['198.51.100.0/24'] } });
    assert.equal((await from('198.51.100.1')).status, 200);
    await save({ rateLimits: { enabled: false, excludedIPs: [] } });
    assert.equal((await from('198.51.100.1')).status, 200);
  });

  test('rateLimits: a collection action tag for guests leaves an authenticated caller alone', async () => {
    await save({ rateLimits: { enabled: true, rules: [{ label: 'items:create', audience: '@guest', duration: 60, maxRequests: 2 }], excludedIPs: [] } });
    const create = (token?: string) => server.request('POST', '/api/collections/items/records', { body: { title: 'x' }, token, headers: { 'x-forwarded-for': '198.51.100.9' } });
    assert.equal((await create()).status, 200);
    assert.equal((await create()).status, 200);
    assert.equal((await create()).status, 429);
    assert.equal((await create(server.adminToken)).status, 200);
    // Another action of the same collection is not counted by the tag.
    assert.equal((await server.request('GET', '/api/collections/items/records', { headers: { 'x-forwarded-for': '198.51.100.9' } })).status, 200);
    await save({ rateLimits: { enabled: false } });
  });

  test('findRule: tags, exact paths, then the longest prefix; the audience narrows', () => {
    const rules: RateLimitRule[] = [
      { label: '/api/', audience: '', duration: 1, maxRequests: 1 },
      { label: '/api/collections/', audience: '', duration: 1, maxRequests: 2 },
      { label: 'POST /api/collections/', audience: '', duration: 1, maxRequests: 3 },
      { label: '*:auth', audience: '', duration: 1, maxRequests: 4 },
      { label: 'users:auth', audience: '@guest', duration: 1, maxRequests: 5 },
      { label: '/api/health', audience: '@auth', duration: 1, maxRequests: 6 },
    ];
    const find = (method: string, path: string, extra: { collection?: string; action?: string; authenticated?: boolean } = {}) =>
      findRule(rules, { method, path, authenticated: false, ...extra })?.maxRequests;
    assert.equal(find('GET', '/api/logs'), 1);
    assert.equal(find('GET', '/api/collections/items/records'), 2);
    assert.equal(find('POST', '/api/collections/items/records'), 3);
    assert.equal(find('POST', '/api/collections/posts/auth-with-password', { collection: 'posts', action: 'auth' }), 4);
    assert.equal(find('POST', '/api/collections/users/auth-with-password', { collection: 'users', action: 'auth' }), 5);
    assert.equal(find('POST', '/api/collections/users/auth-with-password', { collection: 'users', action: 'auth', authenticated: true }), 4);
    assert.equal(find('GET', '/api/health', { authenticated: true }), 6);
    assert.equal(find('GET', '/api/health'), 1);
    assert.equal(find('GET', '/_/index.html'), undefined);
  });
});
