import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox, tokenFrom } from '../helpers/smtp.ts';

const SUPERUSERS_ID = 'pbc_3142635823';
const RECORD_KEYS = ['collectionId', 'collectionName', 'created', 'email', 'emailVisibility', 'id', 'updated', 'verified'];

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

async function signIn(server: TestServer, email = ADMIN_EMAIL, password = ADMIN_PASSWORD) {
  const res = await server.request('POST', '/api/collections/_superusers/auth-with-password', { body: { identity: email, password } });
  assert.equal(res.status, 200, res.text);
  return res.body as { token: string; record: Record<string, unknown> };
}

describe('_superusers: the administrators as PocketBase 0.23 auth records', () => {
  let server: TestServer;
  let inbox: Inbox;

  before(async () => {
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'other' } })).status, 200);
  });
  after(async () => {
    await server.close();
    await inbox.close();
  });

  test('listed among the collections of every database, as a system auth collection', async () => {
    for (const db of ['main', 'other']) {
      const list = await server.admin('GET', '/api/collections?perPage=100', { db });
      assert.equal(list.status, 200, list.text);
      const su = list.body.items.find((c: any) => c.name === '_superusers');
      assert.ok(su, `_superusers in ${db}`);
      assert.equal(su.id, SUPERUSERS_ID);
      assert.equal(su.type, 'auth');
      assert.equal(su.system, true);
      assert.deepEqual(su.passwordAuth, { enabled: true, identityFields: ['email'] });
      assert.equal(su.listRule, null);
    }
    const one = await server.admin('GET', '/api/collections/_superusers', { db: 'other' });
    assert.equal(one.body.id, SUPERUSERS_ID);
    assert.equal((await server.admin('GET', '/api/collections?type=auth')).body.items.filter((c: any) => c.name === '_superusers').length, 1);
    assert.equal((await server.admin('GET', '/api/collections?type=base')).body.items.some((c: any) => c.name === '_superusers'), false);
  });

  test("auth-with-password answers {token, record} with PocketBase 0.23's claims; the token acts as an administrator everywhere", async () => {
    const { token, record } = await signIn(server);
    assert.deepEqual(Object.keys(record).sort(), RECORD_KEYS);
    assert.equal(record.collectionName, '_superusers');
    assert.equal(record.collectionId, SUPERUSERS_ID);
    assert.equal(record.email, ADMIN_EMAIL);
    const claims = claimsOf(token);
    assert.equal(claims.type, 'auth');
    assert.equal(claims.collectionId, SUPERUSERS_ID);
    assert.equal(claims.refreshable, true);
    assert.equal(claims.db, undefined, 'superuser tokens are not bound to a database');
    for (const db of ['main', 'other']) {
      assert.equal((await server.request('GET', '/api/collections', { token, db })).status, 200);
      assert.equal((await server.request('GET', '/api/admins', { token, db })).status, 200, 'the 0.22 API takes the 0.23 token');
    }
    assert.equal((await server.request('GET', '/api/settings', { token })).status, 200);
    assert.equal((await server.request('GET', '/api/collections/_superusers/records', { token: server.adminToken })).status, 200, 'and the 0.23 API the 0.22 token');
    // Either kind is refused once the account's password changes (its tokenKey rotates).
    const spare = await server.admin('POST', '/api/collections/_superusers/records', { body: { email: 'rotating@example.com', password: 'rotating-pass-1', passwordConfirm: 'rotating-pass-1' } });
    const rotating = (await signIn(server, 'rotating@example.com', 'rotating-pass-1')).token;
    assert.equal((await server.request('GET', '/api/collections', { token: rotating })).status, 200);
    assert.equal((await server.admin('PATCH', `/api/collections/_superusers/records/${spare.body.id}`, { body: { password: 'rotated-pass-2', passwordConfirm: 'rotated-pass-2' } })).status, 200);
    assert.equal((await server.request('GET', '/api/collections', { token: rotating })).status, 401);
    assert.equal((await server.admin('DELETE', `/api/collections/_superusers/records/${spare.body.id}`)).status, 204);
  });

  test('wrong and unknown credentials answer alike; other callers get 401 or 403', async () => {
    const wrong = await server.request('POST', '/api/collections/_superusers/auth-with-password', { body: { identity: ADMIN_EMAIL, password: 'not-the-password' } });
    const unknown = await server.request('POST', '/api/collections/_superusers/auth-with-password', { body: { identity: 'nobody@example.com', password: 'not-the-password' } });
    assert.equal(wrong.status, 401);
    assert.match(wrong.body.message, /Invalid credentials/);
    assert.deepEqual(unknown.body, wrong.body);
    const blank = await server.request('POST', '/api/collections/_superusers/auth-with-password', { body: {} });
    assert.equal(blank.status, 400);
    assert.ok(blank.body.data.identity && blank.body.data.password);

    const user = await createUser(server, 'not-a-superuser@example.com');
    assert.equal((await server.request('GET', '/api/collections/_superusers/records')).status, 403, 'a closed collection: a guest gets 403, as PocketBase answers');
    assert.equal((await server.request('GET', '/api/collections/_superusers/records', { token: user.token })).status, 403);
    assert.equal((await server.request('POST', '/api/collections/_superusers/auth-refresh', { token: user.token })).status, 401);
    const created = await server.request('POST', '/api/collections/_superusers/records', { token: user.token, body: { email: 'evil@example.com', password: 'evil-password-1', passwordConfirm: 'evil-password-1' } });
    assert.equal(created.status, 403);
    assert.equal((await server.admin('GET', '/api/collections/_superusers/records?filter=email="evil@example.com"')).body.totalItems, 0);
  });

  test('auth-refresh renews either kind of token as a 0.23 token', async () => {
    const { token } = await signIn(server);
    const refreshed = await server.request('POST', '/api/collections/_superusers/auth-refresh', { token });
    assert.equal(refreshed.status, 200, refreshed.text);
    assert.notEqual(refreshed.body.token, token);
    assert.equal(claimsOf(refreshed.body.token).type, 'auth');
    assert.equal(refreshed.body.record.email, ADMIN_EMAIL);
    const from022 = await server.request('POST', '/api/collections/_superusers/auth-refresh', { token: server.adminToken });
    assert.equal(claimsOf(from022.body.token).collectionId, SUPERUSERS_ID);
    assert.equal((await server.request('POST', '/api/collections/_superusers/auth-refresh')).status, 401);
  });

  test('records CRUD, with filters and sorts; passwordConfirm is asked on create', async () => {
    const noConfirm = await server.admin('POST', '/api/collections/_superusers/records', { body: { email: 'second@example.com', password: 'second-password-1' } });
    assert.equal(noConfirm.status, 400);
    assert.ok(noConfirm.body.data.passwordConfirm);
    const created = await server.admin('POST', '/api/collections/_superusers/records', { body: { email: 'second@example.com', password: 'second-password-1', passwordConfirm: 'second-password-1' } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(Object.keys(created.body).sort(), RECORD_KEYS);
    const duplicate = await server.admin('POST', '/api/collections/_superusers/records', { body: { email: 'second@example.com', password: 'second-password-1', passwordConfirm: 'second-password-1' } });
    assert.equal(duplicate.status, 400);
    assert.ok(duplicate.body.data.email);

    const filtered = await server.admin('GET', `/api/collections/_superusers/records?filter=${encodeURIComponent('email ~ "second"')}`);
    assert.equal(filtered.status, 200, filtered.text);
    assert.deepEqual(filtered.body.items.map((r: any) => r.id), [created.body.id]);
    const sorted = await server.admin('GET', '/api/collections/_superusers/records?sort=-email&skipTotal=1');
    assert.equal(sorted.body.totalItems, -1);
    const emails = sorted.body.items.map((r: any) => r.email);
    assert.deepEqual(emails, [...emails].sort().reverse());
    assert.equal((await server.admin('GET', '/api/collections/_superusers/records?filter=passwordHash="x"')).status, 400);
    assert.equal((await server.admin('GET', '/api/collections/_superusers/records?filter=(((')).status, 400);

    const viewed = await server.admin('GET', `/api/collections/_superusers/records/${created.body.id}`);
    assert.equal(viewed.body.email, 'second@example.com');
    const updated = await server.admin('PATCH', `/api/collections/_superusers/records/${created.body.id}`, { body: { email: 'second-renamed@example.com' } });
    assert.equal(updated.body.email, 'second-renamed@example.com');
    assert.equal((await server.admin('GET', `/api/admins/${created.body.id}`)).body.email, 'second-renamed@example.com', 'the same account as /api/admins');
    assert.equal((await server.admin('DELETE', `/api/collections/_superusers/records/${created.body.id}`)).status, 204);
    assert.equal((await server.admin('GET', `/api/collections/_superusers/records/${created.body.id}`)).status, 404);
  });

  test('request-password-reset and confirm-password-reset through a real SMTP server', async () => {
    await server.admin('POST', '/api/collections/_superusers/records', { body: { email: 'forgetful@example.com', password: 'forgetful-pass-1', passwordConfirm: 'forgetful-pass-1' } });
    const before = (await signIn(server, 'forgetful@example.com', 'forgetful-pass-1')).token;
    const unknown = await server.request('POST', '/api/collections/_superusers/request-password-reset', { body: { email: 'nobody-at-all@example.com' } });
    assert.equal(unknown.status, 204, 'no account oracle');
    const res = await server.request('POST', '/api/collections/_superusers/request-password-reset', { body: { email: 'forgetful@example.com' } });
    assert.equal(res.status, 204);
    const token = tokenFrom(await inbox.next('forgetful@example.com', /Reset/));
    const mismatch = await server.request('POST', '/api/collections/_superusers/confirm-password-reset', { body: { token, password: 'new-password-22', passwordConfirm: 'other-password' } });
    assert.equal(mismatch.status, 400);
    const ok = await server.request('POST', '/api/collections/_superusers/confirm-password-reset', { body: { token, password: 'new-password-22', passwordConfirm: 'new-password-22' } });
    assert.equal(ok.status, 204, ok.text);
    await signIn(server, 'forgetful@example.com', 'new-password-22');
    assert.equal((await server.request('GET', '/api/collections', { token: before })).status, 401, 'earlier tokens are revoked');
    const reused = await server.request('POST', '/api/collections/_superusers/confirm-password-reset', { body: { token, password: 'third-password-3', passwordConfirm: 'third-password-3' } });
    assert.equal(reused.status, 400);
  });

  test('the collection itself cannot be changed, deleted or truncated; other sign-in methods are refused', async () => {
    for (const [method, path] of [
      ['PATCH', '/api/collections/_superusers'],
      ['DELETE', '/api/collections/_superusers'],
      ['DELETE', '/api/collections/_superusers/truncate'],
    ] as const) {
      const res = await server.admin(method, path, { body: method === 'PATCH' ? { listRule: '' } : undefined });
      assert.equal(res.status, 400, `${method} ${path}`);
      assert.equal(res.body.code, 400);
      assert.match(res.body.message, /system collection/);
    }
    assert.equal((await server.admin('GET', '/api/collections/_superusers/records')).body.totalItems >= 1, true, 'nothing changed');
    for (const action of ['request-otp', 'auth-with-otp', 'auth-with-oauth2', 'request-verification']) {
      const res = await server.request('POST', `/api/collections/_superusers/${action}`, { body: { email: ADMIN_EMAIL } });
      assert.equal(res.status, 403, action);
    }
    const methods = await server.request('GET', '/api/collections/_superusers/auth-methods');
    assert.deepEqual(methods.body.password, { enabled: true, identityFields: ['email'] });
    assert.equal(methods.body.otp.enabled, false);
    const created = await server.admin('POST', '/api/collections', { body: { name: SUPERUSERS_ID } });
    assert.equal(created.status, 400, 'the id of _superusers is not a collection name');
  });

  test('impersonating another superuser gives a static token that a refresh does not renew', async () => {
    const other = await server.admin('POST', '/api/collections/_superusers/records', { body: { email: 'other-su@example.com', password: 'other-su-pass-1', passwordConfirm: 'other-su-pass-1' } });
    const res = await server.admin('POST', `/api/collections/_superusers/impersonate/${other.body.id}`, { body: { duration: 60 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.record.email, 'other-su@example.com');
    const claims = claimsOf(res.body.token);
    assert.equal(claims.refreshable, false);
    assert.ok(Math.abs((claims.exp as number) - (claims.iat as number) - 60) <= 1);
    const refreshed = await server.request('POST', '/api/collections/_superusers/auth-refresh', { token: res.body.token });
    assert.equal(refreshed.status, 200);
    assert.equal(refreshed.body.token, res.body.token);
    assert.equal((await server.admin('POST', '/api/collections/_superusers/impersonate/nosuchadmin0000', { body: {} })).status, 404);
    assert.equal((await server.admin('POST', `/api/collections/_superusers/impersonate/${other.body.id}`, { body: { duration: -1 } })).status, 400);
  });
});

describe('_superusers: the last one', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('cannot be deleted, by either API; nothing changes', async () => {
    const { record } = await signIn(server);
    const res = await server.admin('DELETE', `/api/collections/_superusers/records/${record.id}`);
    assert.equal(res.status, 409);
    assert.equal(res.body.code, 409);
    assert.match(res.body.message, /only administrator/);
    assert.equal((await server.admin('DELETE', `/api/admins/${record.id}`)).status, 409);
    assert.equal((await server.admin('GET', '/api/collections/_superusers/records')).body.totalItems, 1);
    await signIn(server);
  });
});
