import assert from 'node:assert/strict';
import Sqlite from 'better-sqlite3';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { PB_TESTS, pocketbaseToken, readPocketBase } from './pb-fixtures.ts';

/**
 * Every kind of token PocketBase issues keeps working after `cairn import pocketbase`, for users and
 * for superusers, in both schema generations: sign-in tokens, file tokens (`?token=` of a protected
 * file), and the verification, password-reset and email-change links it mailed. Each is signed here
 * the way PocketBase signs it (HS256 under the account's tokenKey joined with its kind's secret),
 * and each stops working where PocketBase's would: expired, signed with another kind's secret, used
 * as another kind. Also: the sign-in origins (`_authOrigins`) PocketBase recorded are carried.
 */

const FAR = 2524604461; // 2050
const PAST = 1640991661; // 2022
const SUPERUSERS = 'pbc_3142635823';
const PASSWORD = '1234567890';
type Row = Record<string, any>;

async function freshDir(prefix: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const res = await runCli(['admin', 'create', ADMIN_EMAIL, ADMIN_PASSWORD, '--dir', dir]);
  assert.equal(res.code, 0, res.stderr);
  return dir;
}

describe('PocketBase 0.23+ tokens of every kind, and sign-in origins (PocketBase test data)', () => {
  let dir: string;
  let server: TestServer;
  let report: Row;
  /** Collection id → its options (token secrets by kind). */
  const options = new Map<string, Row>();
  /** `collection:email` → id and tokenKey. */
  const accounts = new Map<string, Row>();
  let origins: Row[];

  before(async () => {
    dir = await freshDir('cairn-pbtokens-');
    const source = readPocketBase(path.join(PB_TESTS, 'data.db'));
    try {
      for (const row of source.prepare("SELECT id, options FROM _collections WHERE type = 'auth'").all() as Row[]) options.set(row.id, JSON.parse(row.options));
      for (const table of ['users', 'clients', '_superusers']) {
        for (const row of source.prepare(`SELECT id, email, tokenKey FROM ${table}`).all() as Row[]) accounts.set(`${table}:${row.email}`, row);
      }
      origins = source.prepare('SELECT * FROM _authOrigins ORDER BY id').all() as Row[];
    } finally {
      source.close();
    }
    const imported = await runCli(['import', 'pocketbase', PB_TESTS, '--dir', dir, '--json'], {}, 120_000);
    assert.equal(imported.code, 0, imported.stderr);
    report = JSON.parse(imported.stdout);
    server = await startServer({ dir });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  /** A token of `kind` for an account, signed with the secret of `secretKind` (its own by default). */
  const sign = (collection: string, collectionId: string, email: string, claims: Row, secretKind: string, exp = FAR) => {
    const account = accounts.get(`${collection}:${email}`)!;
    return pocketbaseToken({ id: account.id, collectionId, exp, ...claims }, account.tokenKey + options.get(collectionId)![secretKind].secret);
  };
  const protectedFile = '/api/files/demo1/al1h9ijdeojtsjy/300_Jsjq7RdBgA.png';

  test("a superuser's file token opens a protected file; expired, signed with the auth secret, or as a sign-in token it does not", async () => {
    const file = (exp = FAR, secret = 'fileToken') => sign('_superusers', SUPERUSERS, 'test@example.com', { type: 'file' }, secret, exp);
    const opened = await fetch(`${server.url}${protectedFile}?token=${file()}`);
    assert.equal(opened.status, 200);
    assert.equal(Buffer.from(await opened.arrayBuffer()).subarray(1, 4).toString(), 'PNG');
    assert.equal((await fetch(`${server.url}${protectedFile}`)).status, 404, 'no token: demo1 is for superusers only');
    assert.equal((await fetch(`${server.url}${protectedFile}?token=${file(PAST)}`)).status, 404, 'expired');
    assert.equal((await fetch(`${server.url}${protectedFile}?token=${file(FAR, 'authToken')}`)).status, 404, 'signed with the auth secret');
    const auth = sign('_superusers', SUPERUSERS, 'test@example.com', { type: 'auth', refreshable: true }, 'authToken');
    assert.equal((await fetch(`${server.url}${protectedFile}?token=${auth}`)).status, 404, 'a sign-in token is not a file token');
    assert.equal((await server.request('GET', '/api/collections', { token: file() })).status, 401, 'nor a file token a sign-in token');
  });

  test("a user's file token opens what the collection's view rule lets the user see, and nothing more", async () => {
    const file = sign('users', '_pb_users_auth_', 'test@example.com', { type: 'file' }, 'fileToken');
    // view1 (a view on demo1) lets signed-in callers see rows with bool = true; demo1 itself is for superusers.
    assert.equal((await fetch(`${server.url}/api/files/view1/84nmscqy84lsi1t/test_d61b33QdDU.txt?token=${file}`)).status, 200);
    assert.equal((await fetch(`${server.url}${protectedFile}?token=${file}`)).status, 404);
    const wrong = sign('users', '_pb_users_auth_', 'test@example.com', { type: 'file' }, 'authToken');
    assert.equal((await fetch(`${server.url}/api/files/view1/84nmscqy84lsi1t/test_d61b33QdDU.txt?token=${wrong}`)).status, 404);
  });

  test('a password-reset link PocketBase mailed to a superuser sets the password once', async () => {
    const link = sign('_superusers', SUPERUSERS, 'test2@example.com', { type: 'passwordReset', email: 'test2@example.com' }, 'passwordResetToken');
    const other = sign('_superusers', SUPERUSERS, 'test2@example.com', { type: 'passwordReset', email: 'test2@example.com' }, 'authToken');
    const refused = await server.request('POST', '/api/collections/_superusers/confirm-password-reset', { body: { token: other, password: 'reset-by-link-1', passwordConfirm: 'reset-by-link-1' } });
    assert.equal(refused.status, 400, refused.text);
    const reset = await server.request('POST', '/api/collections/_superusers/confirm-password-reset', { body: { token: link, password: 'reset-by-link-1', passwordConfirm: 'reset-by-link-1' } });
    assert.equal(reset.status, 204, reset.text);
    const signedIn = await server.request('POST', '/api/collections/_superusers/auth-with-password', { body: { identity: 'test2@example.com', password: 'reset-by-link-1' } });
    assert.equal(signedIn.status, 200, signedIn.text);
    const again = await server.request('POST', '/api/collections/_superusers/confirm-password-reset', { body: { token: link, password: 'reset-by-link-2', passwordConfirm: 'reset-by-link-2' } });
    assert.equal(again.status, 400, 'the new password ended the link');
  });

  test("a user's verification, password-reset and email-change links PocketBase mailed still confirm", async () => {
    const userId = accounts.get('users:test@example.com')!.id;
    const verify = sign('users', '_pb_users_auth_', 'test@example.com', { type: 'verification', email: 'test@example.com' }, 'verificationToken');
    const asReset = sign('users', '_pb_users_auth_', 'test@example.com', { type: 'verification', email: 'test@example.com' }, 'passwordResetToken');
    assert.equal((await server.request('POST', '/api/collections/users/confirm-verification', { body: { token: asReset } })).status, 400, "another kind's secret");
    const verified = await server.request('POST', '/api/collections/users/confirm-verification', { body: { token: verify } });
    assert.equal(verified.status, 204, verified.text);
    assert.equal((await server.admin('GET', `/api/collections/users/records/${userId}`)).body.verified, true);

    const reset = sign('users', '_pb_users_auth_', 'test@example.com', { type: 'passwordReset', email: 'test@example.com' }, 'passwordResetToken');
    const done = await server.request('POST', '/api/collections/users/confirm-password-reset', { body: { token: reset, password: 'reset-by-link-3', passwordConfirm: 'reset-by-link-3' } });
    assert.equal(done.status, 204, done.text);
    // users asks for a second factor (MFA) once the password is right.
    const signedIn = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'test@example.com', password: 'reset-by-link-3' } });
    assert.ok(signedIn.body.mfaId, signedIn.text);

    const change = sign('users', '_pb_users_auth_', 'test2@example.com', { type: 'emailChange', email: 'test2@example.com', newEmail: 'moved@example.com' }, 'emailChangeToken');
    const changed = await server.request('POST', '/api/collections/users/confirm-email-change', { body: { token: change, password: PASSWORD } });
    assert.equal(changed.status, 204, changed.text);
    const moved = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'moved@example.com', password: PASSWORD } });
    assert.ok(moved.body.mfaId, moved.text);
  });

  test("the sign-in origins are carried with their ids, accounts, fingerprints and dates; an account sees and deletes its own", async () => {
    assert.deepEqual(report.authOrigins, { carried: origins.length, skipped: 0 });
    const all = await server.admin('GET', '/api/collections/_authOrigins/records?perPage=100&sort=id');
    assert.equal(all.status, 200, all.text);
    assert.deepEqual(
      all.body.items.map((r: Row) => [r.id, r.collectionRef, r.recordRef, r.fingerprint, r.created, r.updated]),
      origins.map((o) => [o.id, o.collectionRef, o.recordRef, o.fingerprint, new Date(o.created.replace(' ', 'T')).toISOString().replace('T', ' '), new Date(o.updated.replace(' ', 'T')).toISOString().replace('T', ' ')]),
    );
    const client = sign('clients', 'v851q4r790rhknl', 'test@example.com', { type: 'auth', refreshable: true }, 'authToken');
    const own = await server.request('GET', '/api/collections/_authOrigins/records', { token: client });
    assert.equal(own.status, 200, own.text);
    assert.deepEqual(own.body.items.map((r: Row) => r.id), origins.filter((o) => o.recordRef === accounts.get('clients:test@example.com')!.id).map((o) => o.id));
    const stranger = sign('users', '_pb_users_auth_', 'test2@example.com', { type: 'auth', refreshable: true }, 'authToken');
    assert.equal((await server.request('GET', `/api/collections/_authOrigins/records/${own.body.items[0].id}`, { token: stranger })).status, 404);
    assert.equal((await server.request('DELETE', `/api/collections/_authOrigins/records/${own.body.items[0].id}`, { token: client })).status, 204);
  });
});

describe('PocketBase before 0.23: tokens of every kind, with the secrets of its settings', () => {
  const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'legacy-budget');
  const USER = 'a65bvt9ajw7uwtb';
  const PHOTO = 'avatar_k3v9x0qz2m.png';
  const PNG = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a4610000000049454e44ae426082', 'hex');
  const secrets: Record<string, string> = {};
  let dir: string;
  let work: string;
  let server: TestServer;
  let usersId: string;
  let user: Row;
  let second: Row;
  let admin: Row;

  before(async () => {
    // A copy of a legacy fixture given what PocketBase before 0.23 keeps in its settings: a secret per
    // token kind, for records and for administrators; and a protected file of a user.
    work = mkdtempSync(path.join(tmpdir(), 'cairn-pblegacy-src-'));
    cpSync(FIXTURE, work, { recursive: true });
    for (const key of ['recordAuthToken', 'recordFileToken', 'recordVerificationToken', 'recordPasswordResetToken', 'recordEmailChangeToken', 'adminAuthToken', 'adminFileToken', 'adminPasswordResetToken']) {
      secrets[key] = randomBytes(30).toString('base64url');
    }
    const db = new Sqlite(path.join(work, 'data.db'));
    try {
      const settings = Object.fromEntries(Object.entries(secrets).map(([k, secret]) => [k, { secret, duration: 3600 }]));
      db.prepare("INSERT INTO _params (id, key, value, created, updated) VALUES ('settingsrow0001', 'settings', ?, '2024-01-01 00:00:00.000Z', '2024-01-01 00:00:00.000Z')").run(JSON.stringify(settings));
      const users = db.prepare("SELECT id, schema FROM _collections WHERE name = 'users'").get() as Row;
      usersId = users.id;
      const schema = (JSON.parse(users.schema) as Row[]).map((f) => (f.name === 'avatar' ? { ...f, options: { ...f.options, protected: true } } : f));
      db.prepare('UPDATE _collections SET schema = ? WHERE id = ?').run(JSON.stringify(schema), usersId);
      db.prepare('UPDATE users SET avatar = ? WHERE id = ?').run(PHOTO, USER);
      user = db.prepare('SELECT id, email, tokenKey FROM users WHERE id = ?').get(USER) as Row;
      second = db.prepare("SELECT id, email, tokenKey FROM users WHERE id = 'u8czmasn5qi4e7x'").get() as Row;
      admin = db.prepare('SELECT id, email, tokenKey FROM _admins LIMIT 1').get() as Row;
    } finally {
      db.close();
    }
    mkdirSync(path.join(work, 'storage', usersId, USER), { recursive: true });
    writeFileSync(path.join(work, 'storage', usersId, USER, PHOTO), PNG);

    // The fixture's administrator (person1@example.com) is carried beside the test server's own.
    dir = await freshDir('cairn-pblegacy-');
    const imported = await runCli(['import', 'pocketbase', work, '--dir', dir], {}, 120_000);
    assert.equal(imported.code, 0, imported.stderr);
    server = await startServer({ dir });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  const record = (claims: Row, secret: string, exp = FAR) => pocketbaseToken({ id: user.id, type: 'authRecord', collectionId: usersId, exp, ...claims }, user.tokenKey + secrets[secret]);
  const administrator = (claims: Row, secret: string) => pocketbaseToken({ id: admin.id, type: 'admin', exp: FAR, ...claims }, admin.tokenKey + secrets[secret]);
  const photo = () => `/api/files/users/${USER}/${PHOTO}`;

  test("a user's sign-in and file tokens (both `authRecord`) work each as its own kind only", async () => {
    const auth = record({}, 'recordAuthToken');
    const file = record({}, 'recordFileToken');
    assert.equal((await server.request('POST', '/api/collections/users/auth-refresh', { token: auth })).status, 200);
    assert.equal((await server.request('POST', '/api/collections/users/auth-refresh', { token: file })).status, 401, 'a file token does not sign in');
    const opened = await fetch(`${server.url}${photo()}?token=${file}`);
    assert.equal(opened.status, 200);
    assert.deepEqual(Buffer.from(await opened.arrayBuffer()), PNG);
    assert.equal((await fetch(`${server.url}${photo()}?token=${auth}`)).status, 404, 'a sign-in token does not open files');
    assert.equal((await fetch(`${server.url}${photo()}?token=${record({}, 'recordFileToken', PAST)}`)).status, 404, 'expired');
    assert.equal((await fetch(`${server.url}${photo()}`)).status, 404, 'protected');
  });

  test("an administrator's sign-in and file tokens (both `admin`) work each as its own kind only", async () => {
    const auth = administrator({}, 'adminAuthToken');
    const file = administrator({}, 'adminFileToken');
    assert.equal((await server.request('GET', '/api/collections', { token: auth })).status, 200);
    assert.equal((await server.request('GET', '/api/collections', { token: file })).status, 401);
    assert.equal((await fetch(`${server.url}${photo()}?token=${file}`)).status, 200);
    assert.equal((await fetch(`${server.url}${photo()}?token=${auth}`)).status, 404);
  });

  test("a user's verification and email-change links, and a user's and an administrator's password-reset links, confirm", async () => {
    const verify = record({ email: user.email }, 'recordVerificationToken');
    assert.equal((await server.request('POST', '/api/collections/users/confirm-verification', { body: { token: record({ email: user.email }, 'recordAuthToken') } })).status, 400);
    const verified = await server.request('POST', '/api/collections/users/confirm-verification', { body: { token: verify } });
    assert.equal(verified.status, 204, verified.text);

    const change = record({ email: user.email, newEmail: 'legacy-moved@example.com' }, 'recordEmailChangeToken');
    const changed = await server.request('POST', '/api/collections/users/confirm-email-change', { body: { token: change, password: 'users-password-1' } });
    assert.equal(changed.status, 204, changed.text);

    const adminReset = administrator({ email: admin.email }, 'adminPasswordResetToken');
    assert.equal((await server.request('POST', '/api/admins/confirm-password-reset', { body: { token: administrator({ email: admin.email }, 'adminAuthToken'), password: 'legacy-reset-1', passwordConfirm: 'legacy-reset-1' } })).status, 400);
    const reset = await server.request('POST', '/api/admins/confirm-password-reset', { body: { token: adminReset, password: 'legacy-reset-1', passwordConfirm: 'legacy-reset-1' } });
    assert.equal(reset.status, 204, reset.text);
    const signedIn = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: admin.email, password: 'legacy-reset-1' } });
    assert.equal(signedIn.status, 200, signedIn.text);
    assert.equal((await server.request('GET', '/api/collections', { token: administrator({}, 'adminAuthToken') })).status, 401, 'the new password ends the old sessions');
  });

  test("a user's password-reset link sets the password once", async () => {
    const link = pocketbaseToken({ id: second.id, type: 'authRecord', collectionId: usersId, email: second.email, exp: FAR }, second.tokenKey + secrets.recordPasswordResetToken);
    const reset = await server.request('POST', '/api/collections/users/confirm-password-reset', { body: { token: link, password: 'legacy-reset-2', passwordConfirm: 'legacy-reset-2' } });
    assert.equal(reset.status, 204, reset.text);
    const signedIn = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: second.email, password: 'legacy-reset-2' } });
    assert.equal(signedIn.status, 200, signedIn.text);
    const again = await server.request('POST', '/api/collections/users/confirm-password-reset', { body: { token: link, password: 'legacy-reset-3', passwordConfirm: 'legacy-reset-3' } });
    assert.equal(again.status, 400, 'the new password ended the link');
  });
});
