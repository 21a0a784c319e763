import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

type Caller = 'guest' | 'user' | 'other' | 'admin' | 'key' | 'adminKey';
const CALLERS: Caller[] = ['guest', 'user', 'other', 'admin', 'key', 'adminKey'];

/**
 * Each action under each rule kind for each kind of caller, against a real server. `open` has
 * every rule "", `closed` every rule null, `owned` the owner pattern `author = @request.auth.id`.
 */
describe('record access under collection rules', () => {
  let server: TestServer;
  const token: Record<Caller, string | undefined> = { guest: undefined, user: '', other: '', admin: '', key: '', adminKey: '' };
  let userId = '';
  let otherId = '';

  before(async () => {
    server = await startServer();
    const user = await createUser(server, 'rules-user@example.com');
    const other = await createUser(server, 'rules-other@example.com');
    token.user = user.token;
    token.other = other.token;
    userId = user.id;
    otherId = other.id;
    token.admin = server.adminToken;
    token.key = (await server.admin('POST', '/api/keys', { body: { name: 'reader', roles: ['reader'] } })).body.key;
    token.adminKey = (await server.admin('POST', '/api/keys', { body: { name: 'root', roles: 'admin' } })).body.key;
    const fields = [
      { name: 'title', type: 'text' },
      { name: 'author', type: 'relation', options: { toCollection: 'users' } },
    ];
    const all = (rule: string | null) => ({ listRule: rule, viewRule: rule, createRule: rule, updateRule: rule, deleteRule: rule });
    await createCollection(server, { name: 'open', fields, ...all('') });
    await createCollection(server, { name: 'closed', fields, ...all(null) });
    await createCollection(server, { name: 'owned', fields, ...all('author = @request.auth.id') });
    await createCollection(server, {
      name: 'service',
      fields,
      ...all('@request.auth.type = "apikey" && @request.auth.roles ?= "reader"'),
    });
  });
  after(() => server.close());

  const as = (caller: Caller, method: string, path: string, body?: unknown) => server.request(method, path, { token: token[caller], body });

  async function seed(collection: string, title: string, author = userId): Promise<string> {
    const res = await server.admin('POST', `/api/collections/${collection}/records`, { body: { title, author } });
    assert.equal(res.status, 200, res.text);
    return res.body.id;
  }

  async function titles(collection: string): Promise<string[]> {
    const res = await server.admin('GET', `/api/collections/${collection}/records?perPage=500&sort=title`);
    return res.body.items.map((i: { title: string }) => i.title);
  }

  test('list: null is 403 for all but administrators, "" shows everything, an expression filters', async () => {
    const mine = await seed('owned', 'list-mine');
    await seed('owned', 'list-theirs', otherId);
    await seed('open', 'list-open');
    await seed('closed', 'list-closed');
    await seed('service', 'list-service');
    const expected: Record<string, Record<Caller, number | string[]>> = {
      closed: { guest: 403, user: 403, other: 403, admin: ['list-closed'], key: 403, adminKey: ['list-closed'] },
      open: { guest: ['list-open'], user: ['list-open'], other: ['list-open'], admin: ['list-open'], key: ['list-open'], adminKey: ['list-open'] },
      owned: { guest: [], user: ['list-mine'], other: ['list-theirs'], admin: ['list-mine', 'list-theirs'], key: [], adminKey: ['list-mine', 'list-theirs'] },
      service: { guest: [], user: [], other: [], admin: ['list-service'], key: ['list-service'], adminKey: ['list-service'] },
    };
    for (const [collection, byCaller] of Object.entries(expected)) {
      for (const caller of CALLERS) {
        const res = await as(caller, 'GET', `/api/collections/${collection}/records?sort=title&filter=${encodeURIComponent('title ~ "list-"')}`);
        const want = byCaller[caller];
        if (typeof want === 'number') {
          assert.equal(res.status, want, `${collection} as ${caller}: ${res.text}`);
          assert.equal(res.body.code, want);
        } else {
          assert.equal(res.status, 200, `${collection} as ${caller}: ${res.text}`);
          assert.deepEqual(res.body.items.map((i: { title: string }) => i.title), want, `${collection} as ${caller}`);
          assert.equal(res.body.totalItems, want.length, `${collection} as ${caller}: totals count only visible records`);
        }
      }
    }
    assert.ok(mine);
  });

  test('view: null is 403, a failing expression 404 (existence does not leak)', async () => {
    const ids = { open: await seed('open', 'view-open'), closed: await seed('closed', 'view-closed'), owned: await seed('owned', 'view-owned') };
    const expected: Record<keyof typeof ids, Record<Caller, number>> = {
      closed: { guest: 403, user: 403, other: 403, admin: 200, key: 403, adminKey: 200 },
      open: { guest: 200, user: 200, other: 200, admin: 200, key: 200, adminKey: 200 },
      owned: { guest: 404, user: 200, other: 404, admin: 200, key: 404, adminKey: 200 },
    };
    for (const [collection, byCaller] of Object.entries(expected)) {
      for (const caller of CALLERS) {
        const res = await as(caller, 'GET', `/api/collections/${collection}/records/${ids[collection as keyof typeof ids]}`);
        assert.equal(res.status, byCaller[caller], `${collection} as ${caller}: ${res.text}`);
      }
    }
    const missing = await as('user', 'GET', '/api/collections/owned/records/aaaaaaaaaaaaaaa');
    assert.equal(missing.status, 404);
  });

  test('create: null is 403, a failing expression 400 and nothing is written', async () => {
    const expected: Record<string, Record<Caller, number>> = {
      closed: { guest: 403, user: 403, other: 403, admin: 200, key: 403, adminKey: 200 },
      open: { guest: 200, user: 200, other: 200, admin: 200, key: 200, adminKey: 200 },
      owned: { guest: 400, user: 200, other: 400, admin: 200, key: 400, adminKey: 200 },
    };
    for (const [collection, byCaller] of Object.entries(expected)) {
      for (const caller of CALLERS) {
        const title = `create-${caller}`;
        const res = await as(caller, 'POST', `/api/collections/${collection}/records`, { title, author: userId });
        assert.equal(res.status, byCaller[caller], `${collection} as ${caller}: ${res.text}`);
        const stored = (await titles(collection)).includes(title);
        assert.equal(stored, res.status === 200, `${collection} as ${caller}: stored only when allowed`);
      }
    }
  });

  test('update: null is 403, a failing expression 404 and the record is unchanged', async () => {
    const expected: Record<string, Record<Caller, number>> = {
      closed: { guest: 403, user: 403, other: 403, admin: 200, key: 403, adminKey: 200 },
      open: { guest: 200, user: 200, other: 200, admin: 200, key: 200, adminKey: 200 },
      owned: { guest: 404, user: 200, other: 404, admin: 200, key: 404, adminKey: 200 },
    };
    for (const [collection, byCaller] of Object.entries(expected)) {
      for (const caller of CALLERS) {
        const id = await seed(collection, `update-${caller}-before`);
        const res = await as(caller, 'PATCH', `/api/collections/${collection}/records/${id}`, { title: `update-${caller}-after` });
        assert.equal(res.status, byCaller[caller], `${collection} as ${caller}: ${res.text}`);
        const now = (await server.admin('GET', `/api/collections/${collection}/records/${id}`)).body.title;
        assert.equal(now, res.status === 200 ? `update-${caller}-after` : `update-${caller}-before`, `${collection} as ${caller}`);
      }
    }
  });

  test("a user cannot take over someone else's record by rewriting its owner", async () => {
    const theirs = await seed('owned', 'owned-by-other', otherId);
    const res = await as('user', 'PATCH', `/api/collections/owned/records/${theirs}`, { author: userId });
    assert.equal(res.status, 404);
    assert.equal((await server.admin('GET', `/api/collections/owned/records/${theirs}`)).body.author, otherId);
  });

  test('delete: null is 403, a failing expression 404 and the record stays', async () => {
    const expected: Record<string, Record<Caller, number>> = {
      closed: { guest: 403, user: 403, other: 403, admin: 204, key: 403, adminKey: 204 },
      open: { guest: 204, user: 204, other: 204, admin: 204, key: 204, adminKey: 204 },
      owned: { guest: 404, user: 204, other: 404, admin: 204, key: 404, adminKey: 204 },
    };
    for (const [collection, byCaller] of Object.entries(expected)) {
      for (const caller of CALLERS) {
        const id = await seed(collection, `delete-${caller}`);
        const res = await as(caller, 'DELETE', `/api/collections/${collection}/records/${id}`);
        assert.equal(res.status, byCaller[caller], `${collection} as ${caller}: ${res.text}`);
        const left = await server.admin('GET', `/api/collections/${collection}/records/${id}`);
        assert.equal(left.status, res.status === 204 ? 404 : 200, `${collection} as ${caller}`);
      }
    }
  });

  test('expand leaves out related records the caller may not view', async () => {
    const id = await seed('open', 'expand-me');
    // users may view only themselves: the author is expanded for the author alone.
    const own = await as('user', 'GET', `/api/collections/open/records/${id}?expand=author`);
    assert.equal(own.body.expand?.author?.id, userId);
    const other = await as('other', 'GET', `/api/collections/open/records/${id}?expand=author`);
    assert.equal(other.status, 200);
    assert.equal(other.body.expand?.author, undefined);
    const guest = await as('guest', 'GET', `/api/collections/open/records?filter=${encodeURIComponent('title = "expand-me"')}&expand=author`);
    assert.equal(guest.body.items[0].expand?.author, undefined);
    const admin = await as('admin', 'GET', `/api/collections/open/records/${id}?expand=author`);
    assert.equal(admin.body.expand?.author?.email, 'rules-user@example.com');
  });

  test('non-administrators may not use @request or @collection in filter or sort', async () => {
    for (const caller of ['guest', 'user', 'key'] as Caller[]) {
      for (const filter of ['@request.auth.id != ""', '@collection.users.id ?= author', 'title = "x" || @request.method = "GET"']) {
        const res = await as(caller, 'GET', `/api/collections/open/records?filter=${encodeURIComponent(filter)}`);
        assert.equal(res.status, 403, `${caller} ${filter}: ${res.text}`);
      }
      const sorted = await as(caller, 'GET', `/api/collections/open/records?sort=${encodeURIComponent('-@request.auth.id')}`);
      assert.equal(sorted.status, 403, 'in sort too, as PocketBase answers');
    }
    for (const caller of ['admin', 'adminKey'] as Caller[]) {
      const res = await as(caller, 'GET', `/api/collections/open/records?filter=${encodeURIComponent('@collection.users.id ?= author && @request.method = "GET"')}`);
      assert.equal(res.status, 200, res.text);
    }
  });
});

describe('the users collection by default', () => {
  let server: TestServer;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };

  before(async () => {
    server = await startServer();
    alice = await createUser(server, 'alice@example.com', 'user-password-1', { name: 'Alice' });
    bob = await createUser(server, 'bob@example.com', 'user-password-1', { name: 'Bob' });
  });
  after(() => server.close());

  test('a user lists and views only their own record', async () => {
    const list = await server.request('GET', '/api/collections/users/records', { token: alice.token });
    assert.deepEqual(list.body.items.map((u: { id: string }) => u.id), [alice.id]);
    assert.equal((await server.request('GET', `/api/collections/users/records/${bob.id}`, { token: alice.token })).status, 404);
    assert.equal((await server.request('GET', `/api/collections/users/records/${alice.id}`, { token: alice.token })).status, 200);
    const guest = await server.request('GET', '/api/collections/users/records');
    assert.equal(guest.status, 200);
    assert.deepEqual(guest.body.items, []);
  });

  test("a user cannot change or delete another user's record", async () => {
    const res = await server.request('PATCH', `/api/collections/users/records/${bob.id}`, { token: alice.token, body: { name: 'Mallory' } });
    assert.equal(res.status, 404);
    assert.equal((await server.admin('GET', `/api/collections/users/records/${bob.id}`)).body.name, 'Bob');
    // PocketBase's default users: each may delete their own account only (the rule hides the others).
    assert.equal((await server.request('DELETE', `/api/collections/users/records/${bob.id}`, { token: alice.token })).status, 404);
    assert.equal((await server.admin('GET', `/api/collections/users/records/${bob.id}`)).status, 200);
  });

  test('a user updates their own name but never their role or verified flag', async () => {
    const own = await server.request('PATCH', `/api/collections/users/records/${alice.id}`, { token: alice.token, body: { name: 'Alicia' } });
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.name, 'Alicia');
    for (const body of [{ role: 'admin' }, { verified: true }, { name: 'x', role: 'editor' }]) {
      const res = await server.request('PATCH', `/api/collections/users/records/${alice.id}`, { token: alice.token, body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.data[Object.keys(body).at(-1)!].code, 'validation_admin_only');
    }
    const stored = (await server.admin('GET', `/api/collections/users/records/${alice.id}`)).body;
    assert.equal(stored.role, '');
    assert.equal(stored.verified, false);
    assert.equal(stored.name, 'Alicia');
  });

  test('the default rules are the documented ones', async () => {
    const rules = await server.admin('GET', '/api/collections/users/rules');
    assert.deepEqual(rules.body, {
      collection: 'users',
      list: 'id = @request.auth.id && @request.auth.collectionName = "users"',
      view: 'id = @request.auth.id && @request.auth.collectionName = "users"',
      create: '',
      update: 'id = @request.auth.id && @request.auth.collectionName = "users"',
      delete: 'id = @request.auth.id && @request.auth.collectionName = "users"',
    });
  });
});

describe('databases created with the first default users rules', () => {
  test('get the current defaults when they open, unless an administrator changed them', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-rules-upgrade-'));
    try {
      const first = await startServer({ dir });
      const db = await first.services.registry.get('main');
      // The state of a database created before the step existed.
      await db.run(`UPDATE _collections SET listRule = 'id = @request.auth.id', viewRule = 'id = @request.auth.id', updateRule = 'id = @request.auth.id && verified = true' WHERE name = 'users'`);
      await db.run(`DELETE FROM _cairn_schema WHERE id = 'collections.users.own-record-rules'`);
      await first.close();

      const second = await startServer({ dir });
      try {
        const rules = await second.admin('GET', '/api/collections/users/rules');
        assert.equal(rules.body.list, 'id = @request.auth.id && @request.auth.collectionName = "users"');
        assert.equal(rules.body.view, 'id = @request.auth.id && @request.auth.collectionName = "users"');
        assert.equal(rules.body.update, 'id = @request.auth.id && verified = true', 'a changed rule is kept');
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
