import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { skipOn } from '../helpers/postgres.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';

// Small PocketBase v0.39 answers (API contract §19): validation codes, key order and fields that
// PocketBase's clients and its own tests look for.
describe('PocketBase v0.39 details of the auth routes', () => {
  let server: TestServer;
  let ann: { token: string; id: string };

  before(async () => {
    server = await startServer();
    ann = await createUser(server, 'ann@example.com', 'ann-password-1');
    const res = await server.admin('PATCH', '/api/settings', {
      body: { oauth2: { providers: [{ name: 'gitlab', clientId: 'cid', clientSecret: 'secret', enabled: true }] } },
    });
    assert.equal(res.status, 200, JSON.stringify(res.body));
  });
  after(async () => {
    await server.close();
  });

  test('a malformed address is validation_is_email', async () => {
    const res = await server.request('POST', '/api/collections/users/records', {
      body: { email: 'not-an-address', password: 'pw-123456789', passwordConfirm: 'pw-123456789' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.email.code, 'validation_is_email');
  });

  test('an identityField the collection does not sign in with is validation_in_invalid', async () => {
    const res = await server.request('POST', '/api/collections/users/auth-with-password', {
      body: { identityField: 'created', identity: 'ann@example.com', password: 'ann-password-1' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.identityField.code, 'validation_in_invalid');
  });

  test('auth-methods lists identityFields before enabled, providers before enabled, and a logo per v0.23 provider', async () => {
    const res = await server.request('GET', '/api/collections/users/auth-methods');
    assert.equal(res.status, 200);
    assert.deepEqual(Object.keys(res.body.password), ['identityFields', 'enabled']);
    assert.deepEqual(Object.keys(res.body.oauth2), ['providers', 'enabled']);
    const [p] = res.body.oauth2.providers;
    assert.equal(p.name, 'gitlab');
    assert.match(p.logo, /^<svg /);
    assert.equal(res.body.authProviders[0].logo, '', 'the v0.22 list keeps an empty logo');
  });

  test('auth-with-oauth2 reports every form error at once, an unknown provider among them', async () => {
    for (const provider of ['nope', '']) {
      const res = await server.request('POST', '/api/collections/users/auth-with-oauth2', { body: { provider } });
      assert.equal(res.status, 400);
      assert.ok(res.body.data.provider, JSON.stringify(res.body));
      assert.equal(res.body.data.code.code, 'validation_required');
    }
  });

  test('an auth token sent as a confirmation token is validation_invalid_token_payload', async () => {
    const res = await server.request('POST', '/api/collections/users/confirm-email-change', { body: { token: ann.token, password: 'ann-password-1' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.token.code, 'validation_invalid_token_payload');
  });

  test('a backup name that is not a plain .zip name is validation_match_invalid', { skip: skipOn('postgres', 'backups are of SQLite data directories') }, async () => {
    const res = await server.admin('POST', '/api/backups', { body: { name: '../evil.zip' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.name.code, 'validation_match_invalid');
  });
});

describe('PocketBase v0.39 details of record writes', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.close();
  });

  test('a missing or different passwordConfirm is reported alone, before the record’s fields', async () => {
    const empty = await server.request('POST', '/api/collections/users/records', { body: {} });
    assert.equal(empty.status, 400);
    assert.deepEqual(Object.keys(empty.body.data).sort(), ['password', 'passwordConfirm']);
    assert.equal(empty.body.data.passwordConfirm.code, 'validation_required');
    const mismatch = await server.request('POST', '/api/collections/users/records', {
      body: { email: 'not-an-address', password: 'short', passwordConfirm: 'other' },
    });
    assert.equal(mismatch.status, 400);
    assert.deepEqual(Object.keys(mismatch.body.data), ['passwordConfirm']);
    assert.equal(mismatch.body.data.passwordConfirm.code, 'validation_values_mismatch');
    // With the pair right, the fields' own errors come (the password's length among them).
    const fields = await server.request('POST', '/api/collections/users/records', {
      body: { email: 'not-an-address', password: 'short', passwordConfirm: 'short' },
    });
    assert.equal(fields.body.data.email.code, 'validation_is_email');
    assert.equal(fields.body.data.password.code, 'validation_min_text_constraint');
  });

  test('an update naming another id is validation_pk_change; naming the same id is fine', async () => {
    const user = await createUser(server, 'pk@example.com', 'pk-password-1');
    const other = await server.admin('PATCH', `/api/collections/users/records/${user.id}`, { body: { id: 'abcdefghijklmno' } });
    assert.equal(other.status, 400);
    assert.equal(other.body.data.id.code, 'validation_pk_change');
    const same = await server.admin('PATCH', `/api/collections/users/records/${user.id}`, { body: { id: user.id } });
    assert.equal(same.status, 200);
  });
});

describe('PocketBase v0.39 filter and sort of the collections list', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
    for (const name of ['alpha_notes', 'beta_notes', 'gamma']) {
      const res = await server.admin('POST', '/api/collections', { body: { name, type: 'base', fields: [{ name: 'title', type: 'text' }] } });
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
  });
  after(async () => {
    await server.close();
  });

  test('filter over the collections’ own properties; sort by them', async () => {
    const res = await server.admin('GET', `/api/collections?filter=${encodeURIComponent("name~'notes' && system=false")}&sort=-name`);
    assert.equal(res.status, 200);
    assert.equal(res.body.totalItems, 2);
    assert.deepEqual(res.body.items.map((c: { name: string }) => c.name), ['beta_notes', 'alpha_notes']);
  });

  test('an unknown property in filter or sort is a 400 with empty data', async () => {
    for (const q of [`filter=${encodeURIComponent("nope~'x'")}`, 'sort=nope', `filter=${encodeURIComponent('name =')}`]) {
      const res = await server.admin('GET', `/api/collections?${q}`);
      assert.equal(res.status, 400, q);
      assert.deepEqual(res.body.data, {}, q);
    }
  });
});

describe('PocketBase v0.39 token codes of the other confirmations', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(async () => {
    await server.close();
  });

  test('an auth token sent to confirm-verification or confirm-password-reset stays validation_invalid_token', async () => {
    const bo = await createUser(server, 'bo@example.com', 'bo-password-1');
    for (const [path, body] of [
      ['confirm-verification', { token: bo.token }],
      ['confirm-password-reset', { token: bo.token, password: 'new-password-1', passwordConfirm: 'new-password-1' }],
    ] as const) {
      const res = await server.request('POST', `/api/collections/users/${path}`, { body });
      assert.equal(res.status, 400, path);
      assert.equal(res.body.data.token.code, 'validation_invalid_token', path);
    }
  });
});
