import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createUser, request, startServer, type TestServer } from '../helpers/server.ts';

/** Every management endpoint, as [method, path, body]. */
const MANAGEMENT: Array<[string, string, unknown?]> = [
  ['GET', '/api/collections'],
  ['POST', '/api/collections', { name: 'guarded', type: 'base', fields: [] }],
  ['GET', '/api/collections/users'],
  ['PATCH', '/api/collections/users', { listRule: '' }],
  ['DELETE', '/api/collections/users'],
  ['GET', '/api/collections/users/rules'],
  ['PUT', '/api/collections/users/rules', { delete: null }],
  ['GET', '/api/databases'],
  ['POST', '/api/databases', { name: 'guarded' }],
  ['GET', '/api/keys'],
  ['POST', '/api/keys', { name: 'k' }],
  ['GET', '/api/keys/aaaaaaaaaaaaaaa'],
  ['PATCH', '/api/keys/aaaaaaaaaaaaaaa', { name: 'k' }],
  ['DELETE', '/api/keys/aaaaaaaaaaaaaaa'],
  ['POST', '/api/keys/aaaaaaaaaaaaaaa/rotate'],
  ['GET', '/api/admins'],
  ['POST', '/api/admins', { email: 'x@example.com', password: 'long-enough-pw' }],
  ['GET', '/api/admins/aaaaaaaaaaaaaaa'],
  ['PATCH', '/api/admins/aaaaaaaaaaaaaaa', { avatar: 1 }],
  ['DELETE', '/api/admins/aaaaaaaaaaaaaaa'],
  ['GET', '/api/settings'],
  ['PATCH', '/api/settings', { meta: { appName: 'x' } }],
  ['GET', '/api/webhooks/logs'],
  ['POST', '/api/webhooks/logs/aaaaaaaaaaaaaaa/retry'],
  ['GET', '/api/webhooks/cron'],
  ['POST', '/api/webhooks/cron', { name: 'c', schedule: '@every 1h', url: 'http://127.0.0.1:9/x' }],
  ['GET', '/api/webhooks/cron/aaaaaaaaaaaaaaa'],
  ['PATCH', '/api/webhooks/cron/aaaaaaaaaaaaaaa', { enabled: false }],
  ['DELETE', '/api/webhooks/cron/aaaaaaaaaaaaaaa'],
  ['GET', '/api/migrations'],
  ['GET', '/api/migrations/status'],
  ['POST', '/api/migrations/apply-pending'],
  ['GET', '/api/migrations/export'],
];

describe('management endpoints require an administrator or an admin-role API key', () => {
  let server: TestServer;
  let userToken: string;
  let serviceKey: string;
  let adminKey: string;

  before(async () => {
    server = await startServer();
    userToken = (await createUser(server, 'guard-user@example.com')).token;
    serviceKey = (await server.admin('POST', '/api/keys', { body: { name: 'svc', roles: 'service' } })).body.key;
    adminKey = (await server.admin('POST', '/api/keys', { body: { name: 'root', roles: 'admin' } })).body.key;
  });
  after(() => server.close());

  test('a guest gets 401', async () => {
    for (const [method, path, body] of MANAGEMENT) {
      const res = await server.request(method, path, { body });
      assert.equal(res.status, 401, `${method} ${path}: ${res.text}`);
      assert.deepEqual(res.body, { status: 401, code: 401, message: 'The request requires valid authorization token.', data: {} });
    }
  });

  test('a signed-in user gets 403', async () => {
    for (const [method, path, body] of MANAGEMENT) {
      const res = await server.request(method, path, { body, token: userToken });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
      assert.equal(res.body.code, 403);
      assert.deepEqual(res.body.data, {});
    }
  });

  test('an API key without the admin role gets 403', async () => {
    for (const [method, path, body] of MANAGEMENT) {
      const res = await request(server.url, method, path, { body, token: serviceKey });
      assert.equal(res.status, 403, `${method} ${path}: ${res.text}`);
    }
  });

  test('an administrator and an admin-role API key get through', async () => {
    for (const token of [server.adminToken, adminKey]) {
      for (const [method, path] of MANAGEMENT.filter(([m]) => m === 'GET')) {
        const res = await request(server.url, method, path, { token });
        assert.ok(res.status === 200 || res.status === 404, `${method} ${path}: ${res.status} ${res.text}`);
      }
    }
  });
});
