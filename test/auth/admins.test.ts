import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { runCli } from '../helpers/process.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';

const ADMIN_KEYS = ['avatar', 'created', 'email', 'id', 'updated'];

describe('administrators', () => {
  let server: TestServer;
  let token: string;

  before(async () => {
    server = await startServer({ noAdmin: true });
  });
  after(() => server.close());

  test('has-admins is false until init creates the first administrator; init then refuses', async () => {
    assert.deepEqual((await server.request('GET', '/api/admins/has-admins')).body, { hasAdmins: false });

    const mismatch = await server.request('POST', '/api/admins/init', { body: { email: 'root@example.com', password: 'root-password-1', passwordConfirm: 'other' } });
    assert.equal(mismatch.status, 400);
    assert.ok(mismatch.body.data.passwordConfirm);
    const noConfirm = await server.request('POST', '/api/admins/init', { body: { email: 'root@example.com', password: 'root-password-1' } });
    assert.equal(noConfirm.status, 400);
    const short = await server.request('POST', '/api/admins/init', { body: { email: 'root@example.com', password: 'short', passwordConfirm: 'short' } });
    assert.equal(short.status, 400);
    assert.ok(short.body.data.password);
    const badEmail = await server.request('POST', '/api/admins/init', { body: { email: 'root', password: 'root-password-1', passwordConfirm: 'root-password-1' } });
    assert.ok(badEmail.body.data.email);
    assert.deepEqual((await server.request('GET', '/api/admins/has-admins')).body, { hasAdmins: false }, 'failed attempts create nothing');

    const init = await server.request('POST', '/api/admins/init', { body: { email: 'root@example.com', password: 'root-password-1', passwordConfirm: 'root-password-1' } });
    assert.equal(init.status, 200, init.text);
    assert.deepEqual(Object.keys(init.body.admin).sort(), ADMIN_KEYS);
    assert.deepEqual(init.body.user, init.body.admin);
    assert.equal(typeof init.body.token, 'string');
    token = init.body.token;

    assert.deepEqual((await server.request('GET', '/api/admins/has-admins')).body, { hasAdmins: true });
    const again = await server.request('POST', '/api/admins/init', { body: { email: 'evil@example.com', password: 'evil-password-1', passwordConfirm: 'evil-password-1' } });
    assert.equal(again.status, 403);
    assert.equal(again.body.code, 403);
  });

  test('auth-with-password takes identity or email; wrong credentials answer alike', async () => {
    for (const body of [{ identity: 'root@example.com', password: 'root-password-1' }, { email: 'ROOT@example.com', password: 'root-password-1' }]) {
      const res = await server.request('POST', '/api/admins/auth-with-password', { body });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.admin.email, 'root@example.com');
      assert.deepEqual(res.body.user, res.body.admin);
      assert.equal(res.body.admin.passwordHash, undefined);
    }
    const wrong = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: 'root@example.com', password: 'nope-nope-nope' } });
    const unknown = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: 'nobody@example.com', password: 'nope-nope-nope' } });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body.message, /Invalid credentials/);
    assert.deepEqual(unknown.body, wrong.body);
    const blank = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: ['x'], password: '' } });
    assert.equal(blank.status, 400);
  });

  test('me and auth-refresh need an administrator token', async () => {
    const me = await server.request('GET', '/api/admins/me', { token });
    assert.equal(me.status, 200);
    assert.deepEqual(Object.keys(me.body).sort(), ADMIN_KEYS);
    const refreshed = await server.request('POST', '/api/admins/auth-refresh', { token });
    assert.equal(refreshed.status, 200);
    assert.notEqual(refreshed.body.token, token);
    assert.equal(refreshed.body.admin.id, me.body.id);

    const user = await createUser(server, 'plain@example.com');
    const key = await server.request('POST', '/api/keys', { token, body: { name: 'root-key', roles: 'admin' } });
    for (const t of [undefined, user.token, key.body.key]) {
      assert.equal((await server.request('GET', '/api/admins/me', { token: t })).status, 401);
      assert.equal((await server.request('POST', '/api/admins/auth-refresh', { token: t })).status, 401);
    }
  });

  test('CRUD under /api/admins', async () => {
    const created = await server.request('POST', '/api/admins', { token, body: { email: 'ops@example.com', password: 'ops-password-1', avatar: 3 } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), ADMIN_KEYS);
    assert.equal(created.body.avatar, 3);
    const dup = await server.request('POST', '/api/admins', { token, body: { email: 'OPS@example.com', password: 'ops-password-1' } });
    assert.equal(dup.status, 400);
    assert.equal(dup.body.data.email.code, 'validation_not_unique');

    const list = await server.request('GET', '/api/admins', { token });
    assert.equal(list.status, 200);
    assert.equal(list.body.totalItems, 2);
    assert.ok(!list.text.includes('passwordHash') && !list.text.includes('tokenKey'));

    const id = created.body.id;
    assert.equal((await server.request('GET', `/api/admins/${id}`, { token })).body.email, 'ops@example.com');
    const patched = await server.request('PATCH', `/api/admins/${id}`, { token, body: { email: 'ops2@example.com' } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.email, 'ops2@example.com');
    assert.equal((await server.request('PATCH', `/api/admins/${id}`, { token, body: { avatar: 42 } })).status, 400);
    assert.equal((await server.request('PATCH', `/api/admins/${id}`, { token, body: { password: 'short' } })).status, 400);

    assert.equal((await server.request('DELETE', `/api/admins/${id}`, { token })).status, 204);
    assert.equal((await server.request('GET', `/api/admins/${id}`, { token })).status, 404);
    assert.equal((await server.request('DELETE', `/api/admins/${id}`, { token })).status, 404);
    const me = await server.request('GET', '/api/admins/me', { token });
    const last = await server.request('DELETE', `/api/admins/${me.body.id}`, { token });
    assert.equal(last.status, 409, 'the last administrator stays');
  });
});

describe('default administrator and the command line', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-admin-'));
    dirs.push(dir);
    return dir;
  };
  after(() => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  test('CAIRN_ADMIN_EMAIL / CAIRN_ADMIN_PASSWORD create the first administrator', async () => {
    const server = await startServer({ noAdmin: true, env: { CAIRN_ADMIN_EMAIL: 'boot@example.com', CAIRN_ADMIN_PASSWORD: 'boot-password-1' } });
    try {
      assert.deepEqual((await server.request('GET', '/api/admins/has-admins')).body, { hasAdmins: true });
      const login = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: 'boot@example.com', password: 'boot-password-1' } });
      assert.equal(login.status, 200);
    } finally {
      await server.close();
    }
  });

  test('production refuses a weak or example default administrator password, saying why', async () => {
    const env = { NODE_ENV: 'production', CAIRN_ADMIN_EMAIL: 'a@example.com' };
    await assert.rejects(startServer({ dir: tempDir(), noAdmin: true, env: { ...env, CAIRN_ADMIN_PASSWORD: 'short-pw' } }), /shorter than 12 characters/);
    // The real process: exit code 2 and the reason, without a stack trace.
    const res = await runCli(['serve', '--dir', tempDir(), '--port', '0'], { ...env, CAIRN_ADMIN_PASSWORD: 'change-me-now' });
    assert.equal(res.code, 2, res.stderr);
    assert.match(res.stderr, /example value/);
    assert.doesNotMatch(res.stderr, /at .*\.(ts|js):\d+/, 'no stack trace');
    const strong = await startServer({ dir: tempDir(), noAdmin: true, env: { ...env, CAIRN_ADMIN_PASSWORD: 'a-long-unique-passphrase' } });
    assert.deepEqual((await strong.request('GET', '/api/admins/has-admins')).body, { hasAdmins: true });
    await strong.close();
  });

  test('`cairn admin create EMAIL PASSWORD` creates an administrator who can sign in', async () => {
    const dir = tempDir();
    const bad = await runCli(['admin', 'create', 'cli@example.com', 'short', '--dir', dir]);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /password/);

    const ok = await runCli(['admin', 'create', 'cli@example.com', 'cli-password-1', '--dir', dir]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /Created administrator cli@example\.com/);

    const server = await startServer({ dir, noAdmin: true });
    try {
      const login = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: 'cli@example.com', password: 'cli-password-1' } });
      assert.equal(login.status, 200, login.text);
    } finally {
      await server.close();
    }
  });
});
