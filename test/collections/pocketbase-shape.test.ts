import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databaseOf } from '../helpers/inspect.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

describe('collections in PocketBase 0.23 shape beside 0.22', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('a 0.23 body (flat field options, hidden, presentable) is accepted; answers carry both shapes', async () => {
    const res = await server.admin('POST', '/api/collections', {
      body: {
        name: 'notes',
        type: 'base',
        fields: [
          { name: 'id', type: 'text', system: true, primaryKey: true, pattern: '^[a-z0-9]+$' },
          { name: 'title', type: 'text', required: true, max: 5, presentable: true },
          { name: 'secret', type: 'text', hidden: true },
          { name: 'kind', type: 'select', values: ['a', 'b'], maxSelect: 1 },
          { name: 'created', type: 'autodate', onCreate: true },
        ],
        listRule: '',
        viewRule: '',
        createRule: '',
      },
    });
    assert.equal(res.status, 200, res.text);
    // The list as sent, system fields in place (no `updated` was sent: PocketBase lists none).
    const names = res.body.fields.map((f: any) => f.name);
    assert.deepEqual(names, ['id', 'title', 'secret', 'kind', 'created']);
    assert.deepEqual(res.body.schema.map((f: any) => f.name), ['title', 'secret', 'kind'], "v0.22's schema: the collection's own fields");
    const title = res.body.fields[1];
    assert.equal(title.max, 5);
    assert.equal(title.options, undefined, 'no nested options in a ≥ 0.23 field');
    assert.equal(res.body.schema[0].options.max, 5);
    assert.equal(title.presentable, true);
    assert.equal(res.body.fields[2].hidden, true);
    assert.deepEqual(res.body.fields[3].values, ['a', 'b']);
    assert.deepEqual(res.body.fields[0].pattern, '^[a-z0-9]+$');
    assert.equal(res.body.system, false);

    const tooLong = await server.request('POST', '/api/collections/notes/records', { body: { title: 'too long' } });
    assert.equal(tooLong.status, 400, 'the flat max applies');
    const ok = await server.request('POST', '/api/collections/notes/records', { body: { title: 'ok', secret: 's', kind: 'a' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.secret, undefined, 'hidden');
  });

  test('an update changes whichever shape the client changed (it echoes the other back)', async () => {
    const current = (await server.admin('GET', '/api/collections/notes')).body;
    // A 0.23 client: changes the flat key, sends back the nested options as it read them.
    const v023 = current.fields.map((f: any) => (f.name === 'title' ? { ...f, max: 7 } : f));
    const a = await server.admin('PATCH', '/api/collections/notes', { body: { fields: v023 } });
    assert.equal(a.status, 200, a.text);
    assert.equal(a.body.fields[1].max, 7);
    assert.equal(a.body.schema[0].options.max, 7);
    // A 0.21 client: changes the nested option, sends back the flat keys as it read them.
    const v022 = a.body.schema.map((f: any) => (f.name === 'title' ? { ...f, options: { ...f.options, max: 9 } } : f));
    const b = await server.admin('PATCH', '/api/collections/notes', { body: { schema: v022 } });
    assert.equal(b.status, 200, b.text);
    assert.equal(b.body.fields[1].max, 9);
    assert.equal(b.body.schema[0].options.max, 9);
    const nine = await server.request('POST', '/api/collections/notes/records', { body: { title: '123456789' } });
    assert.equal(nine.status, 200, nine.text);
  });

  test("auth settings: top level or in options, partial updates kept, values checked", async () => {
    const users = (await server.admin('GET', '/api/collections/users')).body;
    for (const key of ['passwordAuth', 'oauth2', 'otp', 'mfa', 'authToken']) assert.deepEqual(users[key], users.options[key], key);
    assert.deepEqual(users.passwordAuth, { enabled: true, identityFields: ['email'] });
    assert.deepEqual(users.authToken, { duration: 86400 });

    const a = await server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true } } });
    assert.deepEqual(a.body.otp, { enabled: true, duration: 180, length: 8 });
    const b = await server.admin('PATCH', '/api/collections/users', { body: { options: { ...a.body.options, otp: { ...a.body.options.otp, duration: 300 } } } });
    assert.equal(b.status, 200, b.text);
    assert.deepEqual(b.body.otp, { enabled: true, duration: 300, length: 8 });
    const c = await server.admin('PATCH', '/api/collections/users', { body: { options: { triggers: [] } } });
    assert.deepEqual(c.body.otp, { enabled: true, duration: 300, length: 8 }, 'an options object without auth settings keeps them');

    const bad = await server.admin('PATCH', '/api/collections/users', {
      body: { otp: { duration: 5, length: 'x' }, mfa: { enabled: 'yes' }, passwordAuth: { identityFields: ['name'] }, authToken: { duration: -1 } },
    });
    assert.equal(bad.status, 400);
    // Nested as PocketBase answers them: {otp: {duration: {code, message}}, …}.
    for (const key of ['otp.duration', 'otp.length', 'mfa.enabled', 'passwordAuth.identityFields', 'authToken.duration']) assert.ok(key.split('.').reduce((n: any, k) => n?.[k], bad.body.data)?.code, key);
    assert.deepEqual((await server.admin('GET', '/api/collections/users')).body.otp, { enabled: true, duration: 300, length: 8 }, 'nothing changed');

    const base = await server.admin('PATCH', '/api/collections/notes', { body: { otp: { enabled: true } } });
    assert.equal(base.body.otp, undefined, 'base collections have no auth settings');
    assert.equal(base.body.options.otp, undefined);
    await server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: false } } });
  });

  test('identity fields, password sign-in off, OAuth2 off and the token lifetime take effect', async () => {
    const members = await createCollection(server, {
      name: 'members',
      type: 'auth',
      fields: [{ name: 'username', type: 'text', unique: true }],
      createRule: '',
      passwordAuth: { enabled: true, identityFields: ['username', 'email'] },
      authToken: { duration: 3600 },
    });
    assert.deepEqual(members.passwordAuth.identityFields, ['username', 'email']);
    const created = await server.request('POST', '/api/collections/members/records', { body: { email: 'm@example.com', username: 'mia', password: 'member-pass-1', passwordConfirm: 'member-pass-1' } });
    assert.equal(created.status, 200, created.text);
    for (const identity of ['mia', 'm@example.com']) {
      const res = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity, password: 'member-pass-1' } });
      assert.equal(res.status, 200, res.text);
      const claims = claimsOf(res.body.token);
      assert.ok(Math.abs((claims.exp as number) - (claims.iat as number) - 3600) <= 1, 'authToken.duration');
    }
    const byField = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'mia', password: 'member-pass-1', identityField: 'email' } });
    assert.equal(byField.status, 401);
    const badField = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'mia', password: 'member-pass-1', identityField: 'passwordHash' } });
    assert.equal(badField.status, 400);
    const methods = await server.request('GET', '/api/collections/members/auth-methods');
    assert.deepEqual(methods.body.password, { enabled: true, identityFields: ['username', 'email'] });
    assert.equal(methods.body.usernamePassword, true);
    assert.equal(methods.body.emailPassword, true);

    await server.admin('PATCH', '/api/collections/members', { body: { passwordAuth: { enabled: false }, oauth2: { enabled: false } } });
    const off = await server.request('POST', '/api/collections/members/auth-with-password', { body: { identity: 'mia', password: 'member-pass-1' } });
    assert.equal(off.status, 403);
    const oauth2 = await server.request('POST', '/api/collections/members/auth-with-oauth2', { body: { provider: 'x', code: 'y' } });
    assert.equal(oauth2.status, 403);
    const after = await server.request('GET', '/api/collections/members/auth-methods?fields=password,oauth2');
    assert.deepEqual(after.body, { password: { enabled: false, identityFields: [] }, oauth2: { enabled: false, providers: [] } });
  });

  test('scaffolds: a new collection of each type', async () => {
    const res = await server.admin('GET', '/api/collections/meta/scaffolds');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body).sort(), ['auth', 'base', 'view']);
    assert.equal(res.body.auth.type, 'auth');
    assert.equal(res.body.auth.id, '');
    assert.deepEqual(res.body.auth.passwordAuth, { enabled: true, identityFields: ['email'] });
    assert.equal(res.body.view.viewQuery, '');
    assert.equal((await server.request('GET', '/api/collections/meta/scaffolds')).status, 401);
    // A collection named "meta" keeps its own routes.
    await createCollection(server, { name: 'meta', fields: [{ name: 'x', type: 'text' }], listRule: '' });
    const list = await server.request('GET', '/api/collections/meta/records');
    assert.equal(list.status, 200, list.text);
    assert.equal((await server.admin('GET', '/api/collections/meta')).body.name, 'meta');
  });
});

describe('truncate', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('deletes every record through the delete path (cascades, references) and keeps the collection', async () => {
    await createCollection(server, { name: 'authors', fields: [{ name: 'name', type: 'text' }] });
    await createCollection(server, {
      name: 'books',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'author', type: 'relation', options: { toCollection: 'authors', maxSelect: 1, cascadeDelete: true } },
        { name: 'sequel', type: 'relation', options: { toCollection: 'books', maxSelect: 1, cascadeDelete: true } },
      ],
    });
    await createCollection(server, { name: 'reviews', fields: [{ name: 'book', type: 'relation', options: { toCollection: 'books', maxSelect: 1 } }] });
    const a = (await server.admin('POST', '/api/collections/authors/records', { body: { name: 'A' } })).body;
    const b2 = (await server.admin('POST', '/api/collections/books/records', { body: { title: 'two', author: a.id } })).body;
    await server.admin('POST', '/api/collections/books/records', { body: { title: 'one', author: a.id, sequel: b2.id } });
    const review = (await server.admin('POST', '/api/collections/reviews/records', { body: { book: b2.id } })).body;

    const res = await server.admin('DELETE', '/api/collections/authors/truncate');
    assert.equal(res.status, 204, res.text);
    assert.equal((await server.admin('GET', '/api/collections/authors/records')).body.totalItems, 0);
    assert.equal((await server.admin('GET', '/api/collections/books/records')).body.totalItems, 0, 'cascaded');
    assert.equal((await server.admin('GET', `/api/collections/reviews/records/${review.id}`)).body.book, '', 'optional references cleared');
    assert.equal((await server.admin('GET', '/api/collections/authors')).status, 200, 'the collection stays');
  });

  test('a required reference elsewhere refuses the whole truncate; nothing is deleted', async () => {
    await createCollection(server, { name: 'teams', fields: [{ name: 'name', type: 'text' }] });
    await createCollection(server, { name: 'players', fields: [{ name: 'team', type: 'relation', required: true, options: { toCollection: 'teams', maxSelect: 1 } }] });
    const t1 = (await server.admin('POST', '/api/collections/teams/records', { body: { name: 'free' } })).body;
    const t2 = (await server.admin('POST', '/api/collections/teams/records', { body: { name: 'taken' } })).body;
    await server.admin('POST', '/api/collections/players/records', { body: { team: t2.id } });
    const res = await server.admin('DELETE', '/api/collections/teams/truncate');
    assert.equal(res.status, 400);
    assert.equal(res.body.code, 400);
    assert.match(res.body.message, /required relation/);
    const left = (await server.admin('GET', '/api/collections/teams/records')).body.items.map((r: any) => r.id).sort();
    assert.deepEqual(left, [t1.id, t2.id].sort());
  });

  test('system collections, views, unknown collections and non-admins are refused', async () => {
    await server.request('POST', '/api/auth/register', { body: { email: 'keep@example.com', password: 'keep-pass-1', passwordConfirm: 'keep-pass-1' } });
    const users = await server.admin('DELETE', '/api/collections/users/truncate');
    assert.equal(users.status, 400);
    assert.match(users.body.message, /system collection/);
    assert.equal((await server.admin('GET', '/api/collections/users/records')).body.totalItems, 1);
    assert.equal((await server.admin('DELETE', '/api/collections/nope/truncate')).status, 404);
    assert.equal((await server.request('DELETE', '/api/collections/teams/truncate')).status, 401);
    const db = await databaseOf(server);
    assert.ok((await db.all('SELECT id FROM teams')).length > 0);
  });
});
