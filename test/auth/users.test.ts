import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

describe('user sign-up and sign-in', () => {
  let server: TestServer;
  let alice: { token: string; id: string };

  before(async () => {
    server = await startServer();
    alice = await createUser(server, 'alice@example.com', 'alice-password-1', { name: 'Alice' });
  });
  after(() => server.close());

  test('register answers the created user without secrets', async () => {
    const res = await server.request('POST', '/api/auth/register', {
      body: { email: 'bob@example.com', password: 'bob-password-1', passwordConfirm: 'bob-password-1', name: 'Bob' },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.email, 'bob@example.com');
    assert.equal(res.body.name, 'Bob');
    assert.equal(res.body.verified, false);
    assert.equal(res.body.collectionName, 'users');
    assert.match(res.body.id, /^[a-z0-9]{15}$/);
    for (const secret of ['password', 'passwordHash', 'tokenKey', 'passwordConfirm']) assert.equal(res.body[secret], undefined, secret);
    assert.ok(!res.text.includes('bob-password-1'));
  });

  test('register refuses bad input with per-field errors', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ email: 'x@example.com', password: 'short', passwordConfirm: 'short' }, 'password'],
      [{ email: 'x@example.com', password: 'long-enough-1', passwordConfirm: 'different-1' }, 'passwordConfirm'],
      [{ email: 'not-an-email', password: 'long-enough-1', passwordConfirm: 'long-enough-1' }, 'email'],
      [{ password: 'long-enough-1', passwordConfirm: 'long-enough-1' }, 'email'],
      [{ email: 'x@example.com' }, 'password'],
      [{ email: 'alice@example.com', password: 'long-enough-1', passwordConfirm: 'long-enough-1' }, 'email'],
      [{ email: ['x@example.com'], password: 'long-enough-1', passwordConfirm: 'long-enough-1' }, 'email'],
      [{ email: 'y@example.com', password: 'p'.repeat(2000), passwordConfirm: 'p'.repeat(2000) }, 'password'],
    ];
    for (const [body, field] of cases) {
      const res = await server.request('POST', '/api/auth/register', { body });
      assert.equal(res.status, 400, `${JSON.stringify(body).slice(0, 80)} → ${res.status} ${res.text}`);
      assert.ok(res.body.data[field], `${field} in ${res.text}`);
    }
    assert.equal((await server.request('POST', '/api/auth/register', { body: ['a'] })).status, 400);
    assert.equal((await server.request('POST', '/api/auth/register', { raw: '{"email":', headers: { 'content-type': 'application/json' } })).status, 400);
  });

  test('register ignores role and verified', async () => {
    const res = await server.request('POST', '/api/auth/register', {
      body: { email: 'mallory@example.com', password: 'mallory-pass-1', passwordConfirm: 'mallory-pass-1', role: 'admin', verified: true },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.verified, false);
    assert.equal(res.body.role, '');
  });

  test('a user cannot raise their own role or verify themselves; an administrator can', async () => {
    const path = `/api/collections/users/records/${alice.id}`;
    for (const body of [{ role: 'admin' }, { verified: true }, { role: 'admin', name: 'sneaky' }]) {
      const res = await server.request('PATCH', path, { token: alice.token, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      const field = Object.keys(body)[0];
      assert.equal(res.body.data[field].code, 'validation_admin_only');
    }
    const check = await server.admin('GET', path);
    assert.equal(check.body.role, '');
    assert.equal(check.body.verified, false);
    assert.equal(check.body.name, 'Alice', 'a refused update writes nothing');

    const own = await server.request('PATCH', path, { token: alice.token, body: { name: 'Alice A.' } });
    assert.equal(own.status, 200, own.text);

    const byAdmin = await server.admin('PATCH', path, { body: { role: 'editor', verified: true } });
    assert.equal(byAdmin.status, 200, byAdmin.text);
    assert.equal(byAdmin.body.role, 'editor');
    assert.equal(byAdmin.body.verified, true);
    // Sending the current value back is not a change.
    assert.equal((await server.request('PATCH', path, { token: alice.token, body: { role: 'editor', name: 'Alice' } })).status, 200);
    await server.admin('PATCH', path, { body: { role: '', verified: false } });
  });

  test('a record created through the records API cannot set role or verified either', async () => {
    const res = await server.request('POST', '/api/collections/users/records', {
      body: { email: 'direct@example.com', password: 'direct-pass-1', passwordConfirm: 'direct-pass-1', role: 'admin', verified: true },
    });
    assert.equal(res.status, 400);
    assert.ok(res.body.data.role || res.body.data.verified, res.text);
  });

  test('login returns the auth result; wrong password and unknown email answer alike', async () => {
    const ok = await server.request('POST', '/api/auth/login', { body: { email: 'alice@example.com', password: 'alice-password-1' } });
    assert.equal(ok.status, 200);
    assert.equal(typeof ok.body.token, 'string');
    assert.equal(ok.body.user.id, alice.id);
    assert.equal(ok.body.user.email, 'alice@example.com');
    assert.equal(ok.body.user.passwordHash, undefined);

    const wrong = await server.request('POST', '/api/auth/login', { body: { email: 'alice@example.com', password: 'wrong-password' } });
    const unknown = await server.request('POST', '/api/auth/login', { body: { email: 'nobody@example.com', password: 'wrong-password' } });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body.message, /Invalid credentials/);
    assert.deepEqual(unknown.body, wrong.body);
    assert.equal(unknown.status, wrong.status);
    assert.deepEqual(wrong.body, { status: 401, code: 401, message: wrong.body.message, data: {} });

    const blank = await server.request('POST', '/api/auth/login', { body: { email: '', password: 5 } });
    assert.equal(blank.status, 400);
    assert.ok(blank.body.data.password);
    const injection = await server.request('POST', '/api/auth/login', { body: { email: "' OR '1'='1", password: "' OR '1'='1" } });
    assert.equal(injection.status, 401);
    const emailCase = await server.request('POST', '/api/auth/login', { body: { email: 'ALICE@example.com', password: 'alice-password-1' } });
    assert.equal(emailCase.status, 200, 'emails compare case-insensitively');
  });

  test('refresh returns a new token for the same user; me returns the user', async () => {
    const refreshed = await server.request('POST', '/api/auth/refresh', { token: alice.token });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.notEqual(refreshed.body.token, alice.token);
    assert.equal(refreshed.body.user.id, alice.id);
    const me = await server.request('GET', '/api/auth/me', { token: refreshed.body.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, alice.id);
    assert.equal(me.body.email, 'alice@example.com');

    assert.equal((await server.request('POST', '/api/auth/refresh')).status, 401);
    assert.equal((await server.request('POST', '/api/auth/refresh', { token: server.adminToken })).status, 401);
    assert.equal((await server.request('GET', '/api/auth/me', { token: server.adminToken })).status, 401);
  });

  test('methods lists password sign-in and the (empty) OAuth2 providers', async () => {
    const res = await server.request('GET', '/api/auth/methods');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body.password, { enabled: true });
    assert.deepEqual(res.body.oauth2, { enabled: false, providers: [] });
    const pb = await server.request('GET', '/api/collections/users/auth-methods');
    assert.equal(pb.status, 200);
    assert.equal(pb.body.emailPassword, true);
    assert.deepEqual(pb.body.authProviders, []);
  });

  test('PocketBase paths: auth-with-password and auth-refresh on any auth collection', async () => {
    await createCollection(server, { name: 'members', type: 'auth', fields: [{ name: 'nick', type: 'text' }], createRule: '' });
    const created = await server.admin('POST', '/api/collections/members/records', {
      body: { email: 'member@example.com', password: 'member-pass-1', passwordConfirm: 'member-pass-1', nick: 'm' },
    });
    assert.equal(created.status, 200, created.text);

    const auth = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'member@example.com', password: 'member-pass-1' } });
    assert.equal(auth.status, 200, auth.text);
    assert.equal(auth.body.record.id, created.body.id);
    assert.deepEqual(auth.body.user, auth.body.record);
    const byEmailKey = await server.request('POST', '/api/collections/members/auth-with-password', { body: { email: 'member@example.com', password: 'member-pass-1' } });
    assert.equal(byEmailKey.status, 200);

    const wrong = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'member@example.com', password: 'nope-nope' } });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body.message, /Invalid credentials/);
    // A user of `users` is not a member.
    const otherCollection = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'alice@example.com', password: 'alice-password-1' } });
    assert.equal(otherCollection.status, 401);

    const refreshed = await server.request('POST', '/api/collections/members/auth-refresh', { token: auth.body.token });
    assert.equal(refreshed.status, 200);
    assert.equal(refreshed.body.record.id, created.body.id);
    assert.equal((await server.request('POST', '/api/collections/users/auth-refresh', { token: auth.body.token })).status, 403);

    await createCollection(server, { name: 'notes', type: 'base', fields: [{ name: 't', type: 'text' }] });
    assert.equal((await server.request('POST', '/api/collections/notes/auth-with-password', { body: { identity: 'a@b.co', password: 'x' } })).status, 404);
    assert.equal((await server.request('POST', '/api/collections/nope/auth-with-password', { body: { identity: 'a@b.co', password: 'x' } })).status, 404);
  });
});
