import assert from 'node:assert/strict';
import { onPostgres } from '../helpers/postgres.ts';
import { after, before, describe, test } from 'node:test';
import { databaseOf, indexesOf, indexSqlOf } from '../helpers/inspect.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

const q = encodeURIComponent;

describe('the access-rule resource, injection attempts and auth results', () => {
  let server: TestServer;
  let user: { token: string; id: string };

  before(async () => {
    server = await startServer();
    user = await createUser(server, 'rules-api@example.com');
    await createCollection(server, {
      name: 'items',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'owner', type: 'relation', options: { toCollection: 'users' } },
      ],
      listRule: '',
      viewRule: '',
    });
    for (const title of ['alpha', 'beta', "it's", 'gamma; DROP TABLE items']) {
      const res = await server.admin('POST', '/api/collections/items/records', { body: { title, owner: user.id } });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(() => server.close());

  async function intact(): Promise<void> {
    const items = await server.admin('GET', '/api/collections/items/records?perPage=100');
    assert.equal(items.status, 200, items.text);
    assert.equal(items.body.totalItems, 4);
    const users = await server.admin('GET', '/api/collections/users/records');
    assert.equal(users.status, 200);
    assert.ok(users.body.totalItems >= 1);
  }

  test('GET and PUT /api/collections/:c/rules', async () => {
    const before = await server.admin('GET', '/api/collections/items/rules');
    assert.equal(before.status, 200);
    assert.deepEqual(before.body, { collection: 'items', list: '', view: '', create: null, update: null, delete: null });

    const put = await server.admin('PUT', '/api/collections/items/rules', {
      body: { list: 'owner = @request.auth.id', create: '@request.auth.id != "" && owner = @request.auth.id', delete: null },
    });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.body, {
      collection: 'items',
      list: 'owner = @request.auth.id',
      view: '',
      create: '@request.auth.id != "" && owner = @request.auth.id',
      update: null,
      delete: null,
    });
    const collection = await server.admin('GET', '/api/collections/items');
    assert.equal(collection.body.listRule, 'owner = @request.auth.id');
    // The new rule applies to the very next request.
    assert.equal((await server.request('GET', '/api/collections/items/records')).body.totalItems, 0);
    assert.equal((await server.request('GET', '/api/collections/items/records', { token: user.token })).body.totalItems, 4);
    await server.admin('PUT', '/api/collections/items/rules', { body: { list: '' } });
    assert.equal((await server.request('GET', '/api/collections/items/records')).body.totalItems, 4);

    assert.equal((await server.admin('GET', '/api/collections/nope/rules')).status, 404);
    assert.equal((await server.admin('PUT', '/api/collections/nope/rules', { body: { list: '' } })).status, 404);
  });

  test('owner fields of rules are indexed with created, and the index goes with the rule', async () => {
    const db = await databaseOf(server);
    const indexes = async () => (await indexesOf(db, 'items')).filter((name) => name.endsWith('_owner_idx'));
    // The create rule of the test before compares owner with the caller's id.
    assert.deepEqual(await indexes(), ['_items_owner_owner_idx']);
    await server.admin('PUT', '/api/collections/items/rules', { body: { create: null } });
    assert.deepEqual(await indexes(), []);
    await server.admin('PUT', '/api/collections/items/rules', { body: { view: '@request.auth.id = owner || title = "x"' } });
    assert.deepEqual(await indexes(), ['_items_owner_owner_idx']);
    assert.match((await indexSqlOf(db, '_items_owner_owner_idx')) ?? '', /\(\s*"?owner"?\s*,\s*"?created"?\s*\)/, 'owner, then created');
    const query = 'SELECT id FROM items t0 WHERE t0.owner = ? ORDER BY t0.created DESC';
    const plan =
      db.dialect.name === 'sqlite'
        ? (await db.all<{ detail: string }>(`EXPLAIN QUERY PLAN ${query}`, ['x'])).map((p) => p.detail)
        : // A handful of rows reads fastest without any index; with sequential scans off, the planner
          // shows which index serves the filter and the order.
          await db.transaction(async (tx) => {
            await tx.exec('SET LOCAL enable_seqscan = off');
            return (await tx.all<Record<string, string>>(`EXPLAIN ${query}`, ['x'])).map((p) => Object.values(p)[0]);
          });
    assert.ok(plan.some((p) => p.includes('_items_owner_owner_idx')), JSON.stringify(plan));
    await server.admin('PUT', '/api/collections/items/rules', { body: { view: '' } });
    assert.deepEqual(await indexes(), []);
  });

  test('single relation fields are indexed by default; an owner rule (also through .id) indexes them with created instead', async () => {
    const db = await databaseOf(server);
    const indexes = async () => (await indexesOf(db, 'items')).filter((name) => name.includes('owner'));
    assert.deepEqual(await indexes(), ['_items_owner_rel_idx']);
    await server.admin('PUT', '/api/collections/items/rules', { body: { list: 'owner.id = @request.auth.id' } });
    assert.deepEqual(await indexes(), ['_items_owner_owner_idx']);
    await server.admin('PUT', '/api/collections/items/rules', { body: { list: '' } });
    assert.deepEqual(await indexes(), ['_items_owner_rel_idx']);
    const multi = await server.admin('POST', '/api/collections', {
      body: { name: 'tagged', fields: [{ name: 'items', type: 'relation', options: { toCollection: 'items', maxSelect: null } }] },
    });
    assert.equal(multi.status, 200, multi.text);
    assert.deepEqual((await indexesOf(db, 'tagged')).filter((n) => n.includes('items')), [], 'a multiple relation is a JSON array: no plain index serves it');
    // PostgreSQL lists in the order of its insertion column: an index keeps the first page from sorting the table.
    if (onPostgres) assert.ok((await indexesOf(db, 'items')).includes('_items_order_idx'));
  });

  test("PocketBase's index statements (backticks, COLLATE NOCASE) work on both engines, case-insensitively", async () => {
    const statement = 'CREATE UNIQUE INDEX `idx_items_title_nocase` ON `items` (`title` COLLATE NOCASE)';
    const patched = await server.admin('PATCH', '/api/collections/items', { body: { indexes: [statement] } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.indexes, [statement], 'kept as written');
    const clash = await server.admin('POST', '/api/collections/items/records', { body: { title: 'ALPHA', owner: user.id } });
    assert.equal(clash.status, 400, `"ALPHA" beside "alpha" under a NOCASE unique index: ${clash.text}`);
    const other = await server.admin('POST', '/api/collections/items/records', { body: { title: 'delta', owner: user.id } });
    assert.equal(other.status, 200, other.text);
    await server.admin('DELETE', `/api/collections/items/records/${other.body.id}`);
    assert.equal((await server.admin('PATCH', '/api/collections/items', { body: { indexes: [] } })).status, 200);
  });

  test('an invalid rule is a 400 naming the rule and the position, and nothing changes', async () => {
    const before = (await server.admin('GET', '/api/collections/items/rules')).body;
    const bad: Array<[Record<string, unknown>, string, RegExp]> = [
      [{ view: 'title = "x"', update: 'title = 1 && nope = 2' }, 'update', /Invalid update rule: unknown field "nope" \(at position 13\)/],
      [{ list: 'title = "x' }, 'list', /Invalid list rule: unterminated string \(at position 8\)/],
      [{ delete: '@request.auth.nope = 1' }, 'delete', /Invalid delete rule: unknown field "nope"/],
      [{ create: 42 }, 'create', /must be null or a string/],
      [{ lists: '' }, 'lists', /Unknown rule "lists"/],
      [{ constructor: '' }, 'constructor', /Unknown rule "constructor"/],
      [{ view: '@collection.missing.id ?= owner' }, 'view', /unknown collection "missing"/],
    ];
    for (const [body, key, message] of bad) {
      const res = await server.admin('PUT', '/api/collections/items/rules', { body });
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${res.text}`);
      assert.match(res.body.message, message);
      assert.ok(res.body.data[key], `data names ${key}: ${res.text}`);
      assert.deepEqual((await server.admin('GET', '/api/collections/items/rules')).body, before, 'nothing changed');
    }
    assert.equal((await server.admin('PUT', '/api/collections/items/rules', { raw: '[1]', headers: { 'content-type': 'application/json' } })).status, 400);
  });

  test('collection saves compile their rules too: unknown fields refused, new fields usable', async () => {
    const patched = await server.admin('PATCH', '/api/collections/items', { body: { viewRule: 'nope = 1' } });
    assert.equal(patched.status, 400);
    assert.equal(patched.body.data.viewRule.code, 'validation_invalid_rule');
    assert.match(patched.body.data.viewRule.message, /unknown field "nope" \(at position 0\)/);
    const created = await server.admin('POST', '/api/collections', {
      body: { name: 'drafts', fields: [{ name: 'writer', type: 'relation', options: { toCollection: 'users' } }], listRule: 'writer = @request.auth.id' },
    });
    assert.equal(created.status, 200, created.text);
    const refused = await server.admin('POST', '/api/collections', { body: { name: 'drafts2', fields: [], listRule: 'writer = @request.auth.id' } });
    assert.equal(refused.status, 400);
    assert.equal((await server.admin('GET', '/api/collections/drafts2')).status, 404);
  });

  test('injection through filter and sort is refused or stays a value; data is intact', async () => {
    const valueCases: Array<[string, number]> = [
      [`title = "x' OR '1'='1"`, 0],
      [`title = 'x" OR "1"="1'`, 0],
      [`title = "it's"`, 1],
      [`title = 'it\\'s'`, 1],
      [`title = "gamma; DROP TABLE items"`, 1],
      [`title ~ "%"`, 4],
      [`title ~ "'"`, 1],
      ['"\u0000" = title', 0],
    ];
    for (const [filter, count] of valueCases) {
      const res = await server.request('GET', `/api/collections/items/records?filter=${q(filter)}`);
      // PostgreSQL cannot hold a NUL character in text at all: there the value is refused (400).
      if (onPostgres && filter.includes('\u0000')) {
        assert.equal(res.status, 400, `${filter}: ${res.text}`);
        continue;
      }
      assert.equal(res.status, 200, `${filter}: ${res.text}`);
      assert.equal(res.body.totalItems, count, filter);
    }
    const refused = [
      'title = "a"; DROP TABLE items',
      'title = "a" -- comment',
      'title = "a" /* c */',
      '1 = 1 UNION SELECT * FROM users',
      'title = "a" UNION SELECT passwordHash FROM users',
      'title = (SELECT 1)',
      'passwordHash != ""',
      'owner.passwordHash != ""',
      'owner.tokenKey != ""',
      '@nope = 1',
      'title = "a" OR 1 = 1',
      'title = `a`',
      "title = 'a'' OR ''1'='1'",
    ];
    for (const filter of refused) {
      const res = await server.request('GET', `/api/collections/items/records?filter=${q(filter)}`);
      assert.equal(res.status, 400, `${filter}: ${res.text}`);
      assert.match(res.body.message, /^Invalid filter: /);
      assert.deepEqual(res.body.data, {}, 'as PocketBase: no field error for a filter');
      assert.ok(!res.text.includes('SQLITE'), res.text);
    }
    for (const sort of ['title; DROP TABLE items', '(SELECT 1)', 'title DESC', '-title,--', 'owner.passwordHash', 'title)--']) {
      const res = await server.request('GET', `/api/collections/items/records?sort=${q(sort)}`);
      assert.equal(res.status, 400, `${sort}: ${res.text}`);
    }
    // A guest may not name @request in a sort at all (PocketBase answers 403, as for filters).
    assert.equal((await server.request('GET', `/api/collections/items/records?sort=${q('@request.auth.id')}`)).status, 403);
    await intact();
  });

  test('injection through rule text is refused when saved; values in saved rules and requests stay values', async () => {
    for (const rule of ['title = "x"; DROP TABLE items', 'title = "x" UNION SELECT 1', '1 = 1 -- ', 'title = "x" OR 1 = 1', '@request.auth.id = (SELECT id FROM users)']) {
      const res = await server.admin('PUT', '/api/collections/items/rules', { body: { list: rule } });
      assert.equal(res.status, 400, `${rule}: ${res.text}`);
    }
    const saved = await server.admin('PUT', '/api/collections/items/rules', {
      body: { list: `title != "'); DROP TABLE items; --" && title != @request.headers.x_probe && title != @request.query.probe` },
    });
    assert.equal(saved.status, 200, saved.text);
    const res = await server.request('GET', `/api/collections/items/records?probe=${q("' OR 1=1 --")}`, { headers: { 'x-probe': `alpha" OR "1"="1` } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.totalItems, 4);
    const excluded = await server.request('GET', `/api/collections/items/records?probe=beta`, { headers: { 'x-probe': 'alpha' } });
    assert.equal(excluded.body.totalItems, 2);
    await server.admin('PUT', '/api/collections/items/rules', { body: { list: '' } });
    await intact();
  });

  test('auth results: the signed-in record whatever the view rule; expand follows the related rules', async () => {
    await createCollection(server, { name: 'notes', fields: [{ name: 'text', type: 'text' }], viewRule: '' });
    await createCollection(server, { name: 'secrets', fields: [{ name: 'text', type: 'text' }], viewRule: null });
    const users = (await server.admin('GET', '/api/collections/users')).body;
    const patched = await server.admin('PATCH', '/api/collections/users', {
      body: {
        fields: [
          ...users.fields,
          { name: 'note', type: 'relation', options: { toCollection: 'notes' } },
          { name: 'secret', type: 'relation', options: { toCollection: 'secrets' } },
        ],
      },
    });
    assert.equal(patched.status, 200, patched.text);
    const note = await server.admin('POST', '/api/collections/notes/records', { body: { text: 'visible' } });
    const secret = await server.admin('POST', '/api/collections/secrets/records', { body: { text: 'hidden' } });
    await server.admin('PATCH', `/api/collections/users/records/${user.id}`, { body: { note: note.body.id, secret: secret.body.id } });
    // Even with the users view rule closed, the owner gets their record back from sign-in.
    await server.admin('PUT', '/api/collections/users/rules', { body: { view: null } });

    const credentials = { identity: 'rules-api@example.com', password: 'user-password-1' };
    const login = await server.request('POST', '/api/auth/login?expand=note,secret', { body: { email: credentials.identity, password: credentials.password } });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.user.email, 'rules-api@example.com');
    assert.equal(login.body.user.expand?.note?.text, 'visible');
    assert.equal(login.body.user.expand?.secret, undefined);
    assert.deepEqual(login.body.record, login.body.user);

    const pb = await server.request('POST', '/api/collections/users/auth-with-password?expand=note', { body: credentials });
    assert.equal(pb.body.record.expand?.note?.text, 'visible');
    const me = await server.request('GET', '/api/auth/me?expand=note,secret', { token: login.body.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.expand?.note?.text, 'visible');
    assert.equal(me.body.expand?.secret, undefined);
    const refresh = await server.request('POST', '/api/auth/refresh?expand=note', { token: login.body.token });
    assert.equal(refresh.body.user.expand?.note?.text, 'visible');
    const plain = await server.request('GET', '/api/auth/me', { token: login.body.token });
    assert.equal(plain.body.expand, undefined);

    // The records API itself follows the (closed) view rule.
    assert.equal((await server.request('GET', `/api/collections/users/records/${user.id}`, { token: login.body.token })).status, 403);
    await server.admin('PUT', '/api/collections/users/rules', { body: { view: 'id = @request.auth.id && @request.auth.collectionName = "users"' } });
  });
});
