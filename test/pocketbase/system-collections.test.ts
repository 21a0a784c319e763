import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PocketBase from 'pocketbase-0.28';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

// PocketBase's system collections of auth data (_externalAuths, _authOrigins, _mfas, _otps) as
// record collections: an account reaches its own rows only; superusers write them.
describe('PocketBase system collections of auth data', () => {
  let server: TestServer;
  let ann: { token: string; id: string };
  let bob: { token: string; id: string };
  let usersId: string;
  let member: { token: string; id: string; collectionId: string };

  before(async () => {
    server = await startServer();
    ann = await createUser(server, 'ann@example.com', 'ann-password-1');
    bob = await createUser(server, 'bob@example.com', 'bob-password-1');
    usersId = (await server.admin('GET', '/api/collections/users')).body.id;
    const members = await createCollection(server, { name: 'members', type: 'auth', fields: [] });
    // A record of another auth collection with the same id as ann: the collection must match too. The
    // records API refuses such an id (validation_invalid_auth_id); data brought from elsewhere may
    // still hold one, made here through the SQL console.
    const made = await server.admin('POST', '/api/collections/members/records', { body: { email: 'm@example.com', password: 'member-password-1', passwordConfirm: 'member-password-1' } });
    const moved = await server.admin('POST', '/api/sql', { body: { query: `UPDATE members SET id = '${ann.id}' WHERE id = '${made.body.id}'` } });
    assert.equal(moved.status, 200, moved.text);
    const login = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'm@example.com', password: 'member-password-1' } });
    member = { token: login.body.token, id: ann.id, collectionId: members.id };
    for (const [recordRef, provider, providerId] of [
      [ann.id, 'github', 'gh-ann'],
      [ann.id, 'gitlab', 'gl-ann'],
      [bob.id, 'github', 'gh-bob'],
    ]) {
      const res = await server.admin('POST', '/api/collections/_externalAuths/records', { body: { collectionRef: usersId, recordRef, provider, providerId } });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(() => server.close());

  test('the collections API lists them as system collections with PocketBase’s ids and rules', async () => {
    const list = await server.admin('GET', '/api/collections?perPage=100');
    const names = list.body.items.map((c: { name: string }) => c.name);
    for (const name of ['_externalAuths', '_authOrigins', '_mfas', '_otps']) assert.ok(names.includes(name), name);
    const ea = (await server.admin('GET', '/api/collections/_externalAuths')).body;
    assert.equal(ea.id, 'pbc_2281828961');
    assert.equal(ea.system, true);
    assert.equal(ea.createRule, null);
    assert.match(ea.listRule, /recordRef = @request.auth.id/);
    assert.equal((await server.admin('DELETE', '/api/collections/_mfas')).status, 400);
    assert.equal((await server.admin('PATCH', '/api/collections/_otps', { body: { listRule: '' } })).status, 400);
  });

  test('an account lists and views only its own rows; a guest sees none', async () => {
    const own = await server.request('GET', '/api/collections/_externalAuths/records?sort=provider', { token: ann.token });
    assert.deepEqual(
      own.body.items.map((r: { provider: string }) => r.provider),
      ['github', 'gitlab'],
    );
    const guest = await server.request('GET', '/api/collections/_externalAuths/records');
    assert.equal(guest.status, 200);
    assert.equal(guest.body.totalItems, 0);
    // Same record id, other auth collection: nothing.
    const other = await server.request('GET', '/api/collections/_externalAuths/records', { token: member.token });
    assert.equal(other.body.totalItems, 0);
    const bobs = (await server.admin('GET', `/api/collections/_externalAuths/records?filter=${encodeURIComponent(`recordRef='${bob.id}'`)}`)).body.items[0];
    assert.equal((await server.request('GET', `/api/collections/_externalAuths/records/${bobs.id}`, { token: ann.token })).status, 404);
  });

  test('only superusers create or change rows; an owner deletes their own', async () => {
    const body = { collectionRef: usersId, recordRef: ann.id, fingerprint: 'device-1' };
    assert.equal((await server.request('POST', '/api/collections/_authOrigins/records', { body })).status, 403);
    assert.equal((await server.request('POST', '/api/collections/_authOrigins/records', { body, token: ann.token })).status, 403);
    const made = await server.admin('POST', '/api/collections/_authOrigins/records', { body });
    assert.equal(made.status, 200, made.text);
    assert.equal(made.body.fingerprint, 'device-1');
    assert.equal((await server.request('PATCH', `/api/collections/_authOrigins/records/${made.body.id}`, { body: { fingerprint: 'x' }, token: ann.token })).status, 403);
    assert.equal((await server.request('DELETE', `/api/collections/_authOrigins/records/${made.body.id}`, { token: bob.token })).status, 404);
    assert.equal((await server.request('DELETE', `/api/collections/_authOrigins/records/${made.body.id}`, { token: ann.token })).status, 204);
    // MFA sessions and one-time codes are read-only to their owner.
    assert.equal((await server.request('GET', '/api/collections/_mfas/records', { token: ann.token })).status, 200);
    assert.equal((await server.request('GET', '/api/collections/_otps/records', { token: ann.token })).status, 200);
  });

  test('SDK 0.28 lists and unlinks an account’s OAuth2 links', async () => {
    const pb = new PocketBase(server.url);
    await pb.collection('users').authWithPassword('ann@example.com', 'ann-password-1');
    const links = await pb.collection('users').listExternalAuths(ann.id);
    assert.deepEqual(links.map((l) => l.provider).sort(), ['github', 'gitlab']);
    assert.equal(await pb.collection('users').unlinkExternalAuth(ann.id, 'gitlab'), true);
    const left = await pb.collection('users').listExternalAuths(ann.id);
    assert.deepEqual(left.map((l) => l.provider), ['github']);
    // Bob's link is untouched.
    const bobs = await server.admin('GET', `/api/collections/_externalAuths/records?filter=${encodeURIComponent(`recordRef='${bob.id}'`)}`);
    assert.equal(bobs.body.totalItems, 1);
  });

  test('an OTP sign-in request leaves a row the account can see, without its code', async () => {
    await server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true } } });
    const asked = await server.request('POST', '/api/collections/users/request-otp', { body: { email: 'bob@example.com' } });
    assert.equal(asked.status, 200, asked.text);
    const rows = await server.request('GET', '/api/collections/_otps/records', { token: bob.token });
    assert.equal(rows.body.totalItems, 1);
    assert.equal(rows.body.items[0].id, asked.body.otpId);
    assert.equal(rows.body.items[0].recordRef, bob.id);
    assert.equal(rows.body.items[0].hash, undefined);
    assert.equal(rows.body.items[0].sentTo, undefined, 'sentTo is hidden');
  });
});
