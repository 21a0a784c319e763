import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { checksums, PB_TESTS, pocketbaseToken, readPocketBase } from './pb-fixtures.ts';

/**
 * PocketBase's own test data (the data its API tests run on) imported with `cairn import
 * pocketbase`: nothing left behind, the auth options acting as they did on PocketBase, and the
 * tokens PocketBase issued (signed here the way PocketBase signs them: HS256 under the record's
 * tokenKey joined with its collection's authToken secret) still signing their accounts in.
 */

const PASSWORD = '1234567890';
const FAR = 2524604461; // 2050

interface Account {
  id: string;
  tokenKey: string;
}

describe('cairn import pocketbase: PocketBase\'s own test data', () => {
  let dir: string;
  let server: TestServer;
  let report: string;
  const secrets = new Map<string, string>();
  const accounts = new Map<string, Account>();
  let superuser: Account;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-pbtests-'));
    const res = await runCli(['admin', 'create', ADMIN_EMAIL, ADMIN_PASSWORD, '--dir', dir]);
    assert.equal(res.code, 0, res.stderr);
    const source = readPocketBase(path.join(PB_TESTS, 'data.db'));
    try {
      for (const row of source.prepare("SELECT id, options FROM _collections WHERE type = 'auth'").all() as { id: string; options: string }[]) {
        secrets.set(row.id, JSON.parse(row.options).authToken.secret);
      }
      for (const table of ['users', 'clients', 'nologin']) {
        for (const row of source.prepare(`SELECT id, email, tokenKey FROM ${table}`).all() as Array<Account & { email: string }>) accounts.set(`${table}:${row.email}`, row);
      }
      superuser = source.prepare("SELECT id, tokenKey FROM _superusers WHERE email = 'test@example.com'").get() as Account;
    } finally {
      source.close();
    }
    const imported = await runCli(['import', 'pocketbase', PB_TESTS, '--dir', dir], {}, 120_000);
    assert.equal(imported.code, 0, imported.stderr);
    report = imported.stdout;
    server = await startServer({ dir });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  const userToken = (collection: string, collectionId: string, email: string, extra: Record<string, unknown> = {}) => {
    const account = accounts.get(`${collection}:${email}`)!;
    return pocketbaseToken({ id: account.id, type: 'auth', collectionId, exp: FAR, refreshable: true, ...extra }, account.tokenKey + secrets.get(collectionId));
  };

  test('every collection is carried, nologin (flagged system by PocketBase) included; nothing is left behind', async () => {
    assert.doesNotMatch(report, /Not carried:/, report);
    const list = await server.admin('GET', '/api/collections?perPage=200');
    const names = new Set(list.body.items.map((c: { name: string }) => c.name));
    for (const name of ['users', 'demo1', 'demo2', 'demo3', 'demo4', 'demo5', 'clients', 'nologin', 'view1', 'view2', 'numeric_id_view']) assert.ok(names.has(name), `${name} carried`);
    const nologin = await server.admin('GET', '/api/collections/nologin');
    assert.equal(nologin.body.system, true, "PocketBase's flag kept");
    assert.equal(nologin.body.id, 'kpv709sk2lqbqk8');
  });

  test("a base collection's own email keeps its name, and the views that read it (and views on those) work", async () => {
    const demo1 = await server.admin('GET', '/api/collections/demo1');
    assert.ok(demo1.body.fields.some((f: { name: string; type: string }) => f.name === 'email' && f.type === 'email'));
    const records = await server.admin('GET', '/api/collections/demo1/records?perPage=10&sort=created');
    assert.ok(records.body.items.some((r: { email: string }) => r.email !== ''), 'the values kept under email');
    for (const view of ['view1', 'view2']) {
      const rows = await server.admin('GET', `/api/collections/${view}/records`);
      assert.equal(rows.status, 200, rows.text);
      assert.ok(rows.body.items.length > 0, `${view} has rows`);
    }
    const view1 = await server.admin('GET', '/api/collections/view1');
    const types = new Map(view1.body.fields.map((f: { name: string; type: string }) => [f.name, f.type]));
    assert.equal(types.get('rel_many'), 'relation', "PocketBase's definition of a view column");
    assert.equal(types.get('select_one'), 'select');
  });

  test('indexes whose names start with "_" are renamed and still enforce: a second user with a taken username is refused', async () => {
    const users = await server.admin('GET', '/api/collections/users');
    assert.ok(users.body.indexes.some((i: string) => /CREATE UNIQUE INDEX "pb__pb_users_auth__username_idx"/.test(i)), users.body.indexes.join('\n'));
    const taken = await server.request('POST', '/api/collections/users/records', {
      body: { username: 'test2_username', email: 'new-user@example.com', password: PASSWORD, passwordConfirm: PASSWORD },
    });
    assert.equal(taken.status, 400, taken.text);
    const fresh = await server.request('POST', '/api/collections/users/records', { body: { email: 'another@example.com', password: PASSWORD, passwordConfirm: PASSWORD } });
    assert.equal(fresh.status, 200, fresh.text);
    assert.match(fresh.body.username, /^users\d{5}$/, "PocketBase's autogenerate pattern gives a username");
  });

  test('a superuser token PocketBase issued works until the password changes', async () => {
    const token = pocketbaseToken({ id: superuser.id, type: 'auth', collectionId: 'pbc_3142635823', exp: FAR, refreshable: true }, superuser.tokenKey + secrets.get('pbc_3142635823'));
    const collections = await server.request('GET', '/api/collections', { token });
    assert.equal(collections.status, 200, collections.text);
    const expired = pocketbaseToken({ id: superuser.id, type: 'auth', collectionId: 'pbc_3142635823', exp: 1640991661, refreshable: true }, superuser.tokenKey + secrets.get('pbc_3142635823'));
    assert.equal((await server.request('GET', '/api/collections', { token: expired })).status, 401, 'expired');
    const forged = pocketbaseToken({ id: superuser.id, type: 'auth', collectionId: 'pbc_3142635823', exp: FAR }, `${superuser.tokenKey}not-the-secret`);
    assert.equal((await server.request('GET', '/api/collections', { token: forged })).status, 401, 'forged');
    const changed = await server.request('PATCH', `/api/collections/_superusers/records/${superuser.id}`, { token, body: { password: 'a-new-password-1', passwordConfirm: 'a-new-password-1' } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal((await server.request('GET', '/api/collections', { token })).status, 401, 'a new password ends the tokens PocketBase issued');
  });

  test("a user's token PocketBase issued signs them in, refreshes to a Cairn token of the collection's lifetime, and ends with a new password", async () => {
    const token = userToken('users', '_pb_users_auth_', 'test2@example.com');
    const me = await server.request('POST', '/api/collections/users/auth-refresh', { token });
    assert.equal(me.status, 200, me.text);
    assert.equal(me.body.record.email, 'test2@example.com');
    const claims = JSON.parse(Buffer.from(me.body.token.split('.')[1], 'base64url').toString());
    assert.equal(claims.exp - claims.iat, 1209600, "the collection's authToken duration, as on PocketBase");
    const own = await server.request('GET', `/api/collections/users/records/${accounts.get('users:test2@example.com')!.id}`, { token });
    assert.equal(own.status, 200, own.text);
    assert.equal((await server.request('GET', `/api/collections/users/records/${accounts.get('users:test2@example.com')!.id}`, { token: `${token.slice(0, -2)}xx` })).status, 401, 'a tampered token');
    const changed = await server.request('PATCH', `/api/collections/users/records/${accounts.get('users:test2@example.com')!.id}`, {
      token: me.body.token,
      body: { oldPassword: PASSWORD, password: 'a-new-password-2', passwordConfirm: 'a-new-password-2' },
    });
    assert.equal(changed.status, 200, changed.text);
    assert.equal((await server.request('POST', '/api/collections/users/auth-refresh', { token })).status, 401);
  });

  test('authRule: an unverified client cannot sign in (verified=true), a verified one can, with the username as identity', async () => {
    const unverified = await server.request('POST', '/api/collections/clients/auth-with-password', { body: { identity: 'test2@example.com', password: PASSWORD } });
    assert.equal(unverified.status, 403, unverified.text);
    const token = userToken('clients', 'v851q4r790rhknl', 'test2@example.com');
    assert.equal((await server.request('POST', '/api/collections/clients/auth-refresh', { token })).status, 403, 'nor refresh');
    const username = (await server.admin('GET', `/api/collections/clients/records/${accounts.get('clients:test@example.com')!.id}`)).body.username;
    const verified = await server.request('POST', '/api/collections/clients/auth-with-password', { body: { identity: username, password: PASSWORD } });
    assert.equal(verified.status, 200, verified.text);
    assert.equal(verified.body.record.email, 'test@example.com');
  });

  test('passwordAuth off (nologin), OTP, MFA and OAuth2 providers as PocketBase had them', async () => {
    const nologin = await server.request('POST', '/api/collections/nologin/auth-with-password', { body: { identity: 'test@example.com', password: PASSWORD } });
    assert.equal(nologin.status, 403, nologin.text);
    const methods = await server.request('GET', '/api/collections/users/auth-methods');
    assert.equal(methods.status, 200, methods.text);
    assert.deepEqual(methods.body.password, { enabled: true, identityFields: ['email', 'username'] });
    assert.deepEqual(methods.body.otp, { enabled: true, duration: 300 });
    assert.deepEqual(methods.body.mfa, { enabled: true, duration: 1800 });
    assert.deepEqual(methods.body.oauth2.providers.map((p: { name: string }) => p.name).sort(), ['gitlab', 'google']);
    const first = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'test3@example.com', password: PASSWORD } });
    assert.equal(first.status, 401, first.text);
    assert.ok(first.body.mfaId, 'MFA asks for a second factor');
    const collection = await server.admin('GET', '/api/collections/users');
    assert.equal(JSON.stringify(collection.body).includes('PjVU4hAV7CZIWbCByJHkDcMUlSEWCLI6M5aWSZOpEq0a3rYxKT'), false, 'token secrets are never answered');
    assert.equal(JSON.stringify(collection.body).includes('"clientSecret"'), false, 'nor client secrets');
  });

  test('manageRule: a users record manages nologin records as an administrator would; a clients record does not', async () => {
    const target = accounts.get('nologin:test@example.com')!.id;
    const manager = userToken('users', '_pb_users_auth_', 'test3@example.com');
    const outsider = userToken('clients', 'v851q4r790rhknl', 'test@example.com');
    // nologin's update rule is null (administrators only): the manage rule adds to the update rule, it does not open it.
    const refused = await server.request('PATCH', `/api/collections/nologin/records/${target}`, { token: outsider, body: { verified: true } });
    assert.notEqual(refused.status, 200, refused.text);
    const rules = await server.admin('PATCH', '/api/collections/nologin', { body: { updateRule: '' } });
    assert.equal(rules.status, 200, rules.text);
    const byOutsider = await server.request('PATCH', `/api/collections/nologin/records/${target}`, { token: outsider, body: { verified: true } });
    assert.equal(byOutsider.status, 400, byOutsider.text);
    assert.equal(byOutsider.body.data.verified.code, 'validation_admin_only');
    const byManager = await server.request('PATCH', `/api/collections/nologin/records/${target}`, { token: manager, body: { verified: true, password: 'managed-password-1', passwordConfirm: 'managed-password-1' } });
    assert.equal(byManager.status, 200, byManager.text);
    assert.equal(byManager.body.verified, true);
  });

  test("PocketBase's settings are Cairn's: application name and URL, sender", async () => {
    const settings = await server.admin('GET', '/api/settings');
    assert.equal(settings.status, 200, settings.text);
    assert.equal(settings.body.meta.appName, 'acme_test');
    assert.equal(settings.body.meta.senderAddress, 'support@example.com');
  });

  test('the source is left byte for byte, with no -wal or -shm beside it', () => {
    assert.deepEqual(readdirSync(PB_TESTS).sort(), ['data.db', 'storage']);
    assert.ok(checksums(PB_TESTS).size > 1);
  });
});
