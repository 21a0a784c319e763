import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createCollection, startServer, type TestServer } from '../helpers/server.ts';

const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function multipart(fields: Record<string, string>): FormData {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  return form;
}

describe('request bodies as forms (PocketBase binds JSON, multipart and urlencoded alike)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'notes', type: 'base', fields: [{ name: 'title', type: 'text' }], createRule: '', listRule: '' });
    const user = await server.admin('POST', '/api/collections/users/records', {
      body: { email: 'form@example.com', password: 'form-password-1', passwordConfirm: 'form-password-1' },
    });
    assert.equal(user.status, 200, user.text);
  });
  after(() => server.close());

  test('a superuser signs in with a multipart form, as pocketbase-typegen does', async () => {
    const res = await server.request('POST', '/api/collections/_superusers/auth-with-password', { raw: multipart({ identity: ADMIN_EMAIL, password: ADMIN_PASSWORD }) });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.record.email, ADMIN_EMAIL);
    const wrong = await server.request('POST', '/api/collections/_superusers/auth-with-password', { raw: multipart({ identity: ADMIN_EMAIL, password: 'not-the-password' }) });
    assert.equal(wrong.status, 401);
  });

  test('a user signs in with a urlencoded form, and with a numeric-looking password kept as text', async () => {
    const res = await server.request('POST', '/api/collections/users/auth-with-password', {
      raw: new URLSearchParams({ identity: 'form@example.com', password: 'form-password-1' }).toString(),
      headers: FORM,
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.record.email, 'form@example.com');
    const admin = await server.request('POST', '/api/admins/auth-with-password', { raw: `identity=${encodeURIComponent(ADMIN_EMAIL)}&password=${encodeURIComponent(ADMIN_PASSWORD)}`, headers: FORM });
    assert.equal(admin.status, 200, admin.text);
    assert.ok(admin.body.token);
  });

  test("multipart @jsonPayload carries typed values, winning over plain fields", async () => {
    const form = multipart({ name: 'ignored', '@jsonPayload': JSON.stringify({ name: 'from_payload', type: 'base', fields: [{ name: 'n', type: 'number' }] }) });
    const res = await server.admin('POST', '/api/collections', { raw: form });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'from_payload');
    const broken = await server.admin('POST', '/api/collections', { raw: multipart({ '@jsonPayload': '{"name":' }) });
    assert.equal(broken.status, 400);
    assert.equal(broken.body.code, 400);
  });

  test('settings are saved from a urlencoded form', async () => {
    const res = await server.admin('PATCH', '/api/settings', { raw: '%40jsonPayload=' + encodeURIComponent(JSON.stringify({ meta: { appName: 'Form App' } })), headers: FORM });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.meta.appName, 'Form App');
  });

  test('record writes by urlencoded form reach the record, values cast by field type', async () => {
    const res = await server.request('POST', '/api/collections/notes/records', { raw: 'title=hello+form', headers: FORM });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.title, 'hello form');
  });

  test('repeated keys become a list; prototype keys are dropped or refused; a file on a JSON route is ignored', async () => {
    const form = multipart({ identity: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    form.append('stray', new Blob(['some bytes']), 'stray.txt');
    const res = await server.request('POST', '/api/collections/_superusers/auth-with-password', { raw: form });
    assert.equal(res.status, 200, res.text);
    const proto = multipart({ identity: ADMIN_EMAIL, password: ADMIN_PASSWORD });
    proto.append('__proto__', 'x');
    const refused = await server.request('POST', '/api/collections/_superusers/auth-with-password', { raw: proto });
    assert.equal(refused.status, 400);
    const encoded = await server.request('POST', '/api/collections/_superusers/auth-with-password', {
      raw: `__proto__=x&constructor=y&identity=${encodeURIComponent(ADMIN_EMAIL)}&password=${encodeURIComponent(ADMIN_PASSWORD)}`,
      headers: FORM,
    });
    assert.equal(encoded.status, 200, encoded.text);
    const twice = await server.request('POST', '/api/collections/_superusers/auth-with-password', { raw: `identity=a&identity=b&password=x`, headers: FORM });
    assert.equal(twice.status, 400, twice.text);
    assert.equal(twice.body.code, 400);
  });

  test('a malformed multipart body is a 400, an oversized one a 413', async () => {
    const bad = await server.request('POST', '/api/admins/auth-with-password', { raw: '--xyz\r\nContent-Disposition: form-data; name="identity"\r\n\r\nabc', headers: { 'content-type': 'multipart/form-data; boundary=xyz' } });
    assert.equal(bad.status, 400, bad.text);
    const big = multipart({ identity: 'x'.repeat(700 * 1024), password: 'y'.repeat(700 * 1024) });
    const res = await server.request('POST', '/api/admins/auth-with-password', { raw: big });
    assert.equal(res.status, 413, res.text);
  });
});

describe('trailing slashes on API paths', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('GET /api/logs/ answers as /api/logs, query kept', async () => {
    const plain = await server.admin('GET', '/api/logs?perPage=1');
    const slashed = await server.admin('GET', '/api/logs/?perPage=1');
    assert.equal(slashed.status, 200, slashed.text);
    assert.equal(slashed.body.perPage, 1);
    assert.deepEqual(Object.keys(slashed.body), Object.keys(plain.body));
  });

  test('POST with a trailing slash reaches the route; the dashboard keeps its own', async () => {
    const res = await server.request('POST', '/api/collections/_superusers/auth-with-password/', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(res.status, 200, res.text);
    const health = await server.request('GET', '/api/health/');
    assert.equal(health.status, 200);
    const unknown = await server.request('GET', '/api/nothing-here/');
    assert.equal(unknown.status, 404);
    const dashboard = await fetch(`${server.url}/_`, { redirect: 'manual' });
    assert.equal(dashboard.status, 302);
  });
});

describe('the first administrator through POST /api/admins (v0.22)', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ noAdmin: true });
  });
  after(() => server.close());

  test('a guest creates the first administrator, and only the first', async () => {
    const first = await server.request('POST', '/api/admins', { body: { email: 'first@example.com', password: 'first-password-1', passwordConfirm: 'first-password-1' } });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.email, 'first@example.com');
    assert.equal(first.body.passwordHash, undefined);
    const login = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: 'first@example.com', password: 'first-password-1' } });
    assert.equal(login.status, 200);
    const second = await server.request('POST', '/api/admins', { body: { email: 'second@example.com', password: 'second-password-1', passwordConfirm: 'second-password-1' } });
    assert.equal(second.status, 401);
    assert.equal(await server.services.admins.count(), 1);
    const byAdmin = await server.request('POST', '/api/admins', { token: login.body.token, body: { email: 'second@example.com', password: 'second-password-1', passwordConfirm: 'second-password-1' } });
    assert.equal(byAdmin.status, 200, byAdmin.text);
  });
});

describe('the first administrator: invalid input', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ noAdmin: true });
  });
  after(() => server.close());

  test('an invalid first administrator is a 400 and creates nothing', async () => {
    const res = await server.request('POST', '/api/admins', { body: { email: 'not-an-email', password: 'short' } });
    assert.equal(res.status, 400);
    assert.ok(res.body.data.email);
    assert.equal(await server.services.admins.count(), 0);
    const form = await server.request('POST', '/api/admins', { raw: multipart({ email: 'form-first@example.com', password: 'first-password-1', passwordConfirm: 'first-password-1' }) });
    assert.equal(form.status, 200, form.text);
  });
});
