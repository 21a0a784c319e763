import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { tally } from '../helpers/tally.ts';

/**
 * Changes of one API key or administrator sent at once are decided as if the requests came one after
 * the other: no change undoes another's, and no check is passed by two requests that together break it.
 */
describe('API keys and administrators: changes sent at once', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('PATCHes of different properties of one API key: each 200, every change kept', async () => {
    // Several rounds: one round may happen to be served one request at a time.
    for (let round = 0; round < 5; round++) {
      const key = await server.admin('POST', '/api/keys', { body: { name: 'k', roles: ['a'] } });
      assert.equal(key.status, 200, key.text);
      const replies = await Promise.all([
        server.admin('PATCH', `/api/keys/${key.body.id}`, { body: { name: 'renamed' } }),
        server.admin('PATCH', `/api/keys/${key.body.id}`, { body: { enabled: false } }),
        server.admin('PATCH', `/api/keys/${key.body.id}`, { body: { roles: ['b'] } }),
      ]);
      assert.deepEqual(tally(replies), { 200: 3 }, replies.map((r) => r.text).join('\n'));
      const { name, enabled, roles } = (await server.admin('GET', `/api/keys/${key.body.id}`)).body;
      assert.deepEqual({ name, enabled, roles }, { name: 'renamed', enabled: false, roles: ['b'] }, `round ${round}`);
    }
  });

  test("PATCHes of an administrator's email and password: each 200, both kept", async (t) => {
    // The next test needs the starting administrator alone, whatever this one found.
    t.after(async () => {
      for (const a of (await server.admin('GET', '/api/admins')).body.items) if (a.email !== ADMIN_EMAIL) await server.admin('DELETE', `/api/admins/${a.id}`);
    });
    for (let round = 0; round < 3; round++) {
      const email = `twice${round}@example.com`;
      const made = await server.admin('POST', '/api/admins', { body: { email, password: 'old-password-1', passwordConfirm: 'old-password-1' } });
      assert.equal(made.status, 200, made.text);
      // The password first: its hashing keeps it open while the email's PATCH comes and goes.
      const replies = await Promise.all([
        server.admin('PATCH', `/api/admins/${made.body.id}`, { body: { password: 'new-password-1', passwordConfirm: 'new-password-1' } }),
        server.admin('PATCH', `/api/admins/${made.body.id}`, { body: { email: `moved${round}@example.com` } }),
      ]);
      assert.deepEqual(tally(replies), { 200: 2 }, replies.map((r) => r.text).join('\n'));
      assert.equal((await server.admin('GET', `/api/admins/${made.body.id}`)).body.email, `moved${round}@example.com`, `round ${round}`);
      const signIn = (password: string) => server.request('POST', '/api/admins/auth-with-password', { body: { identity: `moved${round}@example.com`, password } });
      assert.equal((await signIn('new-password-1')).status, 200, `round ${round}: the new password`);
      assert.equal((await signIn('old-password-1')).status, 401, `round ${round}: the old password`);
    }
  });

  test('deletes of the only two administrators: one 204, the other the 409 of the last one', async () => {
    let me = { id: (await server.admin('GET', '/api/admins/me')).body.id as string, email: ADMIN_EMAIL, password: ADMIN_PASSWORD, token: server.adminToken };
    for (let round = 0; round < 3; round++) {
      const list = await server.request('GET', '/api/admins', { token: me.token });
      assert.equal(list.body.totalItems, 1, list.text);
      const other = { email: `other${round}@example.com`, password: `other-password-${round}` };
      const made = await server.request('POST', '/api/admins', { token: me.token, body: { ...other, passwordConfirm: other.password } });
      assert.equal(made.status, 200, made.text);
      const replies = await Promise.all([me.id, made.body.id].map((id) => server.request('DELETE', `/api/admins/${id}`, { token: me.token })));
      // Both carry the token of one of the two: a request checked after that one is deleted is a 401.
      const statuses = replies.map((r) => r.status);
      assert.equal(statuses.filter((s) => s === 204).length, 1, replies.map((r) => `${r.status} ${r.text}`).join('\n'));
      assert.ok(statuses.every((s) => s === 204 || s === 409 || s === 401), String(statuses));
      const refused = replies.find((r) => r.status === 409);
      if (refused) assert.equal(refused.body.message, 'The only administrator cannot be deleted.');
      assert.deepEqual((await server.request('GET', '/api/admins/has-admins')).body, { hasAdmins: true });
      const survivor = replies[0].status === 204 ? other : me;
      const login = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: survivor.email, password: survivor.password } });
      assert.equal(login.status, 200, login.text);
      me = { ...survivor, id: login.body.admin.id, token: login.body.token };
    }
  });
});

describe('the first administrator, asked for by several guests at once', () => {
  const servers: TestServer[] = [];
  after(() => Promise.all(servers.map((s) => s.close())));
  const body = (i: number) => ({ email: `first${i}@example.com`, password: 'first-password-1', passwordConfirm: 'first-password-1' });

  async function administrators(server: TestServer, token: string): Promise<number> {
    return (await server.request('GET', '/api/admins', { token })).body.totalItems;
  }

  test('POST /api/admins/init ×10: one 200, the others the 403 of an instance that has one', async () => {
    const server = await startServer({ noAdmin: true });
    servers.push(server);
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => server.request('POST', '/api/admins/init', { body: body(i) })));
    assert.deepEqual(tally(replies), { 200: 1, 403: 9 }, replies.map((r) => r.text).join('\n'));
    assert.equal(await administrators(server, replies.find((r) => r.status === 200)!.body.token), 1);
  });

  test('POST /api/admins ×10 without a token: one 200, the others 401', async () => {
    const server = await startServer({ noAdmin: true });
    servers.push(server);
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => server.request('POST', '/api/admins', { body: body(i) })));
    assert.deepEqual(tally(replies), { 200: 1, 401: 9 }, replies.map((r) => r.text).join('\n'));
    const first = body(0);
    const login = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: replies.find((r) => r.status === 200)!.body.email, password: first.password } });
    assert.equal(await administrators(server, login.body.token), 1);
  });
});
