import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { form } from '../helpers/files.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

/**
 * PocketBase's superuser IP whitelist (`superuserIPs`, v0.39): once it lists addresses or subnets, an
 * administrator is refused from anywhere else, on every path that recognises one: a token, a sign-in,
 * a file token. Users are not concerned. `cairn superuser ips` sets or clears it from the command line.
 */
describe('the superuserIPs setting', () => {
  let dir: string;
  let server: TestServer;
  const FORBIDDEN = { status: 403, code: 403, message: 'You are not allowed to perform this request.', data: {} };
  /** Requests as if from `ip`, through the proxy the settings trust. */
  const from = (ip: string) => ({ headers: { 'x-forwarded-for': ip } });

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-superuser-ips-'));
    server = await startServer({ dir });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  test('is refused unless every entry is an address or a CIDR subnet', async () => {
    const res = await server.admin('PATCH', '/api/settings', { body: { superuserIPs: ['10.0.0.1', 'nope', '10.0.0.0/33', ''] } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.data.superuserIPs['1'].code, 'validation_invlaid_ip_or_subnet');
    assert.equal(res.body.data.superuserIPs['2'].code, 'validation_invlaid_ip_or_subnet');
    assert.equal(res.body.data.superuserIPs['3'].code, 'validation_required');
    assert.equal((await server.admin('PATCH', '/api/settings', { body: { superuserIPs: 'x' } })).status, 400);
    assert.deepEqual((await server.admin('GET', '/api/settings')).body.superuserIPs, []);
  });

  test('administrators are served only from the listed addresses; users as before', async () => {
    const signedIn = '@request.auth.id != ""';
    await createCollection(server, { name: 'papers', fields: [{ name: 'doc', type: 'file', options: { maxSelect: 1, protected: true } }], listRule: signedIn, viewRule: signedIn, createRule: '' });
    const paper = await server.request('POST', '/api/collections/papers/records', { raw: form([['doc', { name: 'a.txt', data: 'secret' }]]) });
    assert.equal(paper.status, 200, paper.text);
    const fileToken = (await server.admin('POST', '/api/files/token')).body.token;
    const fileUrl = `/api/files/papers/${paper.body.id}/${paper.body.doc}?token=${fileToken}`;
    const user = await createUser(server, 'ips-user@example.com');

    const saved = await server.admin('PATCH', '/api/settings', { body: { trustedProxy: { headers: ['X-Forwarded-For'] }, superuserIPs: ['10.0.0.0/8', '192.0.2.7'] } });
    assert.equal(saved.status, 200, saved.text);
    assert.deepEqual(saved.body.superuserIPs, ['10.0.0.0/8', '192.0.2.7']);

    // From elsewhere: PocketBase's 403 on the token, at sign-in in both generations, on the file token.
    const elsewhere = from('203.0.113.5');
    const refused = await server.admin('GET', '/api/settings', elsewhere);
    assert.equal(refused.status, 403, refused.text);
    assert.deepEqual(refused.body, FORBIDDEN);
    assert.equal((await server.admin('GET', '/api/collections', elsewhere)).status, 403);
    const signIn = await server.request('POST', '/api/collections/_superusers/auth-with-password', { ...elsewhere, body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(signIn.status, 403, signIn.text);
    assert.equal(signIn.body.token, undefined);
    assert.equal((await server.request('POST', '/api/admins/auth-with-password', { ...elsewhere, body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).status, 403);
    assert.equal((await server.request('GET', fileUrl, elsewhere)).status, 404, "a protected file is a guest's there");
    // A wrong password is still the sign-in's own answer.
    assert.equal((await server.request('POST', '/api/collections/_superusers/auth-with-password', { ...elsewhere, body: { identity: ADMIN_EMAIL, password: 'wrong-password' } })).status, 401);

    // From a listed subnet or address: as before.
    for (const ip of ['10.1.2.3', '192.0.2.7']) {
      assert.equal((await server.admin('GET', '/api/settings', from(ip))).status, 200, ip);
      const ok = await server.request('POST', '/api/collections/_superusers/auth-with-password', { ...from(ip), body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      assert.equal(ok.status, 200, ok.text);
      const file = await server.request('GET', fileUrl, from(ip));
      assert.equal(file.status, 200, ip);
      assert.equal(file.text, 'secret');
    }
    // Users are not concerned.
    const own = await server.request('GET', `/api/collections/users/records/${user.id}`, { ...elsewhere, token: user.token });
    assert.equal(own.status, 200, own.text);
  });

  test('`cairn superuser ips` sets and clears the list; `superuser otp` says administrators have none', async () => {
    await server.close();
    const set = await runCli(['superuser', 'ips', '127.0.0.1', '10.0.0.0/8', '--dir', dir]);
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, 'Successfully updated SuperuserIPs setting:\n├─ 127.0.0.1\n└─ 10.0.0.0/8\n');
    const bad = await runCli(['superuser', 'ips', 'nope', '--dir', dir]);
    assert.equal(bad.code, 2, 'a usage error, as the other superuser commands');
    assert.match(bad.stderr, /nope: Must be a valid IP address or CIDR subnet/);
    const otp = await runCli(['superuser', 'otp', ADMIN_EMAIL, '--dir', dir]);
    assert.equal(otp.code, 2);
    assert.match(otp.stderr, /OTP auth is not enabled for the _superusers collection/);
    const cleared = await runCli(['superuser', 'ips', '--dir', dir]);
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(cleared.stdout, 'Successfully cleared SuperuserIPs setting!\n');
    server = await startServer({ dir });
    assert.deepEqual((await server.admin('GET', '/api/settings', from('203.0.113.5'))).body.superuserIPs, []);
  });
});
