import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { deriveKey } from '../../src/auth/secret.ts';
import { storedInstanceSecret } from '../helpers/inspect.ts';
import { databaseUrlFor, skipOn } from '../helpers/postgres.ts';
import { createUser, request, startServer, type TestServer } from '../helpers/server.ts';

const UNAUTHORIZED = { status: 401, code: 401, message: 'The request requires valid authorization token.', data: {} };

function claimsOf(token: string): Record<string, any> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

describe('auth tokens', () => {
  let server: TestServer;
  let user: { token: string; id: string };
  let otherDbUser: { token: string; id: string };

  before(async () => {
    server = await startServer();
    user = await createUser(server, 'token-user@example.com');
    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'b' } })).status, 200);
    otherDbUser = await createUser(server, 'token-user@example.com', 'user-password-1', {}, 'b');
  });
  after(() => server.close());

  const me = (authorization: string | undefined, db?: string) =>
    request(server.url, 'GET', '/api/auth/me', { db, headers: authorization === undefined ? {} : { authorization } });

  test('the claims are PocketBase’s plus sub, iat, db and a jti', async () => {
    const c = claimsOf(user.token);
    assert.equal(c.id, user.id);
    assert.equal(c.sub, user.id);
    assert.equal(c.type, 'authRecord');
    assert.equal(c.db, 'main');
    assert.equal(typeof c.collectionId, 'string');
    assert.equal(c.exp - c.iat, 86400);
    assert.equal(typeof c.jti, 'string');
    assert.equal(JSON.parse(Buffer.from(user.token.split('.')[0], 'base64url').toString()).alg, 'HS256');
    assert.equal(claimsOf(server.adminToken).type, 'admin');
  });

  test('the generated instance secret is kept with mode 0600', { skip: skipOn('postgres', 'the secret file of a data directory') }, () => {
    const file = path.join(server.dir, '.jwt_secret');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(readFileSync(file, 'utf8').trim().length >= 32);
  });

  test('the generated instance secret is kept in cairn_system, and a second node on the database signs alike', { skip: skipOn('sqlite', 'the secret shared in the database') }, async () => {
    const main = await server.services.registry.get('main');
    const stored = await main.get<{ value: string }>("SELECT value FROM cairn_system._secrets WHERE name = 'instance'");
    assert.ok(stored && stored.value.length >= 32);
    assert.equal(existsSync(path.join(server.dir, '.jwt_secret')), false, 'no secret file beside a shared database');

    // Another process's data directory, the same database: it reads the secret instead of making one.
    const other = await startServer({ env: { CAIRN_DATABASE_URL: await databaseUrlFor(server.dir) }, noAdmin: true });
    try {
      const mine = await request(other.url, 'GET', '/api/auth/me', { token: user.token });
      assert.equal(mine.status, 200, mine.text);
      assert.equal(mine.body.id, user.id);
      // And the other way: a token the second node signs is valid on the first.
      const login = await request(other.url, 'POST', '/api/auth/login', { body: { email: 'token-user@example.com', password: 'user-password-1' } });
      assert.equal(login.status, 200, login.text);
      assert.equal((await me(`Bearer ${login.body.token}`)).body.id, user.id);
      assert.equal(existsSync(path.join(other.dir, '.jwt_secret')), false);
      assert.equal((await main.get<{ value: string }>("SELECT value FROM cairn_system._secrets WHERE name = 'instance'"))?.value, stored.value, 'the secret was not replaced');
    } finally {
      await other.close();
    }
  });

  test('a valid token works with and without "Bearer "', async () => {
    const withScheme = await me(`Bearer ${user.token}`);
    assert.equal(withScheme.status, 200);
    assert.equal(withScheme.body.id, user.id);
    assert.equal(withScheme.body.email, 'token-user@example.com');
    assert.equal((await me(user.token)).status, 200);
    assert.equal((await me(`bearer   ${user.token}`)).status, 200);
  });

  test('no token on a session endpoint is a 401', async () => {
    const res = await me(undefined);
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, UNAUTHORIZED);
  });

  test('malformed, forged, alg:none and tampered tokens are 401, also on public endpoints', async () => {
    const [header, payload] = user.token.split('.');
    const forged = await new SignJWT(claimsOf(user.token)).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode('x'.repeat(64)));
    const adminClaims = { ...claimsOf(user.token), type: 'admin' };
    const attacks: Record<string, string> = {
      empty: 'Bearer ',
      garbage: 'Bearer abc.def.ghi',
      twoParts: `Bearer ${header}.${payload}`,
      notBase64: 'Bearer @@@.###.$$$',
      forged: `Bearer ${forged}`,
      algNone: `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`,
      algNoneAdmin: `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64(adminClaims)}.`,
      tamperedPayload: `Bearer ${header}.${b64(adminClaims)}.${user.token.split('.')[2]}`,
      hs512Header: `Bearer ${b64({ alg: 'HS512', typ: 'JWT' })}.${payload}.${user.token.split('.')[2]}`,
      basic: 'Basic dXNlcjpwYXNz',
    };
    for (const [name, authorization] of Object.entries(attacks)) {
      for (const path of ['/api/auth/me', '/api/collections/users/records', '/api/health']) {
        const res = await request(server.url, 'GET', path, { headers: { authorization } });
        if (path === '/api/health' && name === 'empty') continue;
        assert.equal(res.status, 401, `${name} on ${path}: ${res.status}`);
        assert.deepEqual(res.body, UNAUTHORIZED, name);
      }
    }
  });

  test('an expired token is a 401', async () => {
    const row = await (await server.services.registry.get('main')).get<{ tokenKey: string; id: string }>('SELECT id, tokenKey FROM users WHERE id = ?', [user.id]);
    const expired = await server.services.tokens.sign({ id: row!.id, type: 'authRecord', collectionId: claimsOf(user.token).collectionId, db: 'main', tokenKey: row!.tokenKey }, -10);
    const res = await me(`Bearer ${expired}`);
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, UNAUTHORIZED);
  });

  test('a token signed with the instance key but claims that do not add up is a 401', async () => {
    const secret = await storedInstanceSecret(server.dir, server.services.registry.system);
    assert.ok(secret, 'a generated instance secret is stored');
    const key = deriveKey(secret, 'auth');
    const now = Math.floor(Date.now() / 1000);
    const base = claimsOf(user.token);
    const cases: Record<string, Record<string, unknown>> = {
      wrongVer: { ...base, ver: 'AAAAAAAAAAAAAAAA' },
      noVer: { ...base, ver: undefined },
      unknownType: { ...base, type: 'superuser' },
      unknownUser: { ...base, id: 'zzzzzzzzzzzzzzz' },
      unknownCollection: { ...base, collectionId: 'nope' },
      noExp: { ...base, exp: undefined },
    };
    for (const [name, claims] of Object.entries(cases)) {
      const token = await new SignJWT(JSON.parse(JSON.stringify(claims))).setProtectedHeader({ alg: 'HS256' }).setIssuedAt(now).sign(key);
      const res = await me(`Bearer ${token}`);
      assert.equal(res.status, 401, name);
    }
  });

  test('a token from database b is refused in main, and the reverse', async () => {
    assert.equal((await me(`Bearer ${otherDbUser.token}`, 'b')).status, 200);
    const crossed = await me(`Bearer ${otherDbUser.token}`, 'main');
    assert.equal(crossed.status, 401);
    assert.deepEqual(crossed.body, UNAUTHORIZED);
    assert.equal((await me(`Bearer ${otherDbUser.token}`)).status, 401);
    assert.equal((await me(`Bearer ${user.token}`, 'b')).status, 401);
    const records = await request(server.url, 'GET', '/api/collections/users/records', { token: user.token, db: 'b' });
    assert.equal(records.status, 401);
  });

  test('an unknown database is a 404 whatever the token', async () => {
    const res = await me(`Bearer ${user.token}`, 'nosuchdb');
    assert.equal(res.status, 404);
    assert.equal(res.body.message, 'Database "nosuchdb" not found.');
  });

  test('administrator tokens reach every database', async () => {
    for (const db of ['main', 'b']) {
      const res = await server.admin('GET', '/api/collections', { db });
      assert.equal(res.status, 200, db);
    }
  });

  test('a password change revokes earlier tokens of that user', async () => {
    const u = await createUser(server, 'revoke@example.com', 'first-password-1');
    const second = await server.request('POST', '/api/auth/login', { body: { email: 'revoke@example.com', password: 'first-password-1' } });
    const change = await server.request('PATCH', `/api/collections/users/records/${u.id}`, {
      token: u.token,
      body: { oldPassword: 'first-password-1', password: 'second-password-2', passwordConfirm: 'second-password-2' },
    });
    assert.equal(change.status, 200, change.text);
    for (const token of [u.token, second.body.token]) {
      const res = await me(`Bearer ${token}`);
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, UNAUTHORIZED);
    }
    const fresh = await server.request('POST', '/api/auth/login', { body: { email: 'revoke@example.com', password: 'second-password-2' } });
    assert.equal(fresh.status, 200);
    assert.equal((await me(`Bearer ${fresh.body.token}`)).status, 200);
  });

  test('an administrator’s password change revokes their earlier tokens', async () => {
    const created = await server.admin('POST', '/api/admins', { body: { email: 'second-admin@example.com', password: 'second-admin-pw' } });
    assert.equal(created.status, 200, created.text);
    const login = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: 'second-admin@example.com', password: 'second-admin-pw' } });
    assert.equal((await server.request('GET', '/api/admins/me', { token: login.body.token })).status, 200);
    await server.admin('PATCH', `/api/admins/${created.body.id}`, { body: { password: 'changed-admin-pw', passwordConfirm: 'changed-admin-pw' } });
    const res = await server.request('GET', '/api/admins/me', { token: login.body.token });
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, UNAUTHORIZED);
  });

  test('a deleted user’s token is refused', async () => {
    const u = await createUser(server, 'deleted@example.com');
    assert.equal((await server.admin('DELETE', `/api/collections/users/records/${u.id}`)).status, 204);
    assert.equal((await me(`Bearer ${u.token}`)).status, 401);
  });
});
