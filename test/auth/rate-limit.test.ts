import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { RATE_LIMITS } from '../../src/http/plugins/rate-limit.ts';
import { request, startServer, type TestServer } from '../helpers/server.ts';

/** A sign-in that fails validation before any hashing: cheap, and still counted by the limiter. */
function blankLogin(server: TestServer, email: string, headers: Record<string, string> = {}) {
  return request(server.url, 'POST', '/api/auth/login', { body: { email, password: '' }, headers });
}

function assertLimited(res: { status: number; body: any; headers: Headers }) {
  assert.equal(res.status, 429);
  assert.deepEqual(res.body, { status: 429, code: 429, message: 'Too many requests.', data: {} });
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${res.headers.get('retry-after')}`);
}

describe('rate limits', () => {
  let direct: TestServer;
  let proxied: TestServer;

  before(async () => {
    direct = await startServer({ env: { CAIRN_RATE_LIMIT: 'on' }, noAdmin: true });
    proxied = await startServer({ env: { CAIRN_RATE_LIMIT: 'on', CAIRN_TRUST_PROXY: '127.0.0.1' }, noAdmin: true });
  });
  after(async () => {
    await direct.close();
    await proxied.close();
  });

  test('sign-in attempts for one identity are limited, whatever the IP claims', async () => {
    for (let i = 0; i < RATE_LIMITS.perIdentity.max; i++) {
      const res = await blankLogin(direct, 'Target@example.com', { 'x-forwarded-for': `10.0.0.${i}` });
      assert.equal(res.status, 400, `attempt ${i + 1}`);
    }
    assertLimited(await blankLogin(direct, 'target@example.com'));
    // The limit is per route: a password-reset request for that address is counted apart.
    const reset = await request(direct.url, 'POST', '/api/collections/users/request-password-reset', { body: { email: 'target@example.com' } });
    assert.equal(reset.status, 204);
    // Another identity from the same IP still gets through (the per-IP limit is higher).
    assert.equal((await blankLogin(direct, 'someone-else@example.com')).status, 400);
  });

  test('sensitive routes are limited per IP across identities; X-Forwarded-For is ignored without a trusted proxy', async () => {
    let limited: Awaited<ReturnType<typeof blankLogin>> | undefined;
    for (let i = 0; i <= RATE_LIMITS.sensitivePerIp.max && !limited; i++) {
      const res = await blankLogin(direct, `ip-user-${i}@example.com`, { 'x-forwarded-for': `10.1.0.${i}` });
      if (res.status === 429) limited = res;
      else assert.equal(res.status, 400);
    }
    assert.ok(limited, 'the per-IP limit was reached');
    assertLimited(limited);
    assertLimited(await request(direct.url, 'POST', '/api/auth/register', { body: { email: 'new@example.com' }, headers: { 'x-forwarded-for': '10.9.9.9' } }));
    // Routes that are not sign-in related only know the loose global limit.
    assert.equal((await request(direct.url, 'GET', '/api/health')).status, 200);
  });

  test('behind a trusted proxy each client address has its own budget', async () => {
    const from = (ip: string, email: string) => blankLogin(proxied, email, { 'x-forwarded-for': `${ip}, 127.0.0.1` });
    for (let i = 0; i < RATE_LIMITS.sensitivePerIp.max; i++) assert.equal((await from('203.0.113.7', `p${i}@example.com`)).status, 400);
    assertLimited(await from('203.0.113.7', 'one-more@example.com'));
    assert.equal((await from('203.0.113.8', 'one-more@example.com')).status, 400);
  });

  test('the whole API is limited per IP at a looser limit', async () => {
    const headers = { 'x-forwarded-for': '198.51.100.1' };
    const batch = 100;
    let sent = 0;
    while (sent < RATE_LIMITS.global.max) {
      const n = Math.min(batch, RATE_LIMITS.global.max - sent);
      const answers = await Promise.all(Array.from({ length: n }, () => fetch(`${proxied.url}/api/health`, { headers }).then((r) => r.status)));
      assert.ok(answers.every((s) => s === 200));
      sent += n;
    }
    assertLimited(await request(proxied.url, 'GET', '/api/health', { headers }));
    assertLimited(await request(proxied.url, 'GET', '/api/nope', { headers }));
    assert.equal((await request(proxied.url, 'GET', '/api/health', { headers: { 'x-forwarded-for': '198.51.100.2' } })).status, 200);
  });
});

describe('CAIRN_RATE_LIMIT=off', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { CAIRN_RATE_LIMIT: 'off' }, noAdmin: true });
  });
  after(() => server.close());

  test('disables every limit', async () => {
    for (let i = 0; i < RATE_LIMITS.perIdentity.max + 5; i++) assert.equal((await blankLogin(server, 'same@example.com')).status, 400);
  });
});
