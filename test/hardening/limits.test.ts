import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RATE_LIMITS } from '../../src/http/plugins/rate-limit.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/** Every way to sign in, sign up or use a mailed token, each with a body that fails fast. */
const SIGN_IN_ROUTES: Array<[string, string]> = [
  ['POST', '/api/auth/login'],
  ['POST', '/api/auth/register'],
  ['GET', '/api/auth/oauth2-login'],
  ['POST', '/api/admins/auth-with-password'],
  ['POST', '/api/admins/init'],
  ['POST', '/api/collections/users/auth-with-password'],
  ['POST', '/api/collections/users/auth-with-oauth2'],
  ['POST', '/api/collections/users/request-verification'],
  ['POST', '/api/collections/users/confirm-verification'],
  ['POST', '/api/collections/users/request-password-reset'],
  ['POST', '/api/collections/users/confirm-password-reset'],
];

/**
 * Rate limits on authentication, on by default: every route that checks a password, creates an
 * account or takes a mailed token shares the strict per-IP budget, so spending it on one of them
 * closes all of them, while the rest of the API stays open.
 */
describe('rate limits cover every sign-in route', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { CAIRN_RATE_LIMIT: 'on' } });
  });
  after(() => server.close());

  test('spending the per-IP budget on one route closes every sign-in route with a 429, and only those', async () => {
    // The test server's own admin sign-in spent one request of the budget.
    for (let i = 1; i < RATE_LIMITS.sensitivePerIp.max; i++) {
      const res = await server.request('POST', '/api/auth/login', { body: {} });
      assert.notEqual(res.status, 429, `request ${i}`);
    }
    for (const [method, path] of SIGN_IN_ROUTES) {
      const res = await server.request(method, path, method === 'GET' ? {} : { body: {} });
      assert.equal(res.status, 429, `${method} ${path}: ${res.text}`);
      assert.deepEqual(res.body, { status: 429, code: 429, message: 'Too many requests.', data: {} });
      assert.ok(Number(res.headers.get('retry-after')) >= 1);
    }
    assert.equal((await server.request('GET', '/api/health')).status, 200);
    assert.equal((await server.admin('GET', '/api/collections')).status, 200);
  });
});
