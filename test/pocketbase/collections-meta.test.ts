import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

describe('PocketBase meta endpoints: dry-run of a view, OAuth2 providers, /api/crons', () => {
  let server: TestServer;
  let user: { token: string };
  before(async () => {
    server = await startServer();
    user = await createUser(server, 'meta-user@example.com');
    await createCollection(server, { name: 'posts', fields: [{ name: 'title', type: 'text' }, { name: 'score', type: 'number' }] });
    for (const [title, score] of [['a', 1], ['b', 2]] as const) await server.admin('POST', '/api/collections/posts/records', { body: { title, score } });
  });
  after(() => server.close());

  const dryRun = (query: unknown, token: string | null = server.adminToken) =>
    server.request('POST', '/api/collections/meta/dry-run-view', { body: { query }, token });

  test('a dry run answers the fields and a sample, and leaves nothing behind', async () => {
    const res = await dryRun('select id, title, score from posts order by title');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.fields.map((f: { name: string; type: string }) => [f.name, f.type]),
      [['id', 'text'], ['title', 'text'], ['score', 'number']],
    );
    assert.deepEqual(res.body.sample.map((r: { title: string }) => r.title), ['a', 'b']);
    const list = await server.admin('GET', '/api/collections?perPage=100');
    assert.ok(!list.body.items.some((c: { name: string }) => c.name.startsWith('cairn_dry_run')));
    const sql = await server.admin('POST', '/api/sql', { body: { query: "select count(*) from information_schema.views where table_name like 'cairn_dry_run%'" } });
    const sqliteSql = await server.admin('POST', '/api/sql', { body: { query: "select count(*) from sqlite_master where name like 'cairn_dry_run%'" } });
    assert.deepEqual([sql, sqliteSql].filter((r) => r.status === 200).map((r) => r.body.rows[0][0]), ['0']);
  });

  test('a dry run refuses writes, rows without ids or with the same id, and empty queries', async () => {
    for (const query of ['create table t1(x int)', "select '' as id", 'select 1 as id union all select 1 as id']) {
      const res = await dryRun(query);
      assert.equal(res.status, 400, query);
      assert.match(res.body.message, /^Invalid view query\. Raw error:/, query);
    }
    assert.equal((await dryRun('')).body.data.query.code, 'validation_required');
    assert.equal((await dryRun('select 1 as id', null)).status, 401);
    assert.equal((await dryRun('select 1 as id', user.token)).status, 403);
  });

  test('the OAuth2 providers Cairn knows by name are listed to administrators', async () => {
    const res = await server.admin('GET', '/api/collections/meta/oauth2-providers');
    assert.equal(res.status, 200);
    assert.ok(res.body.some((p: { name: string; displayName: string }) => p.name === 'github' && p.displayName === 'GitHub'));
    // The generic OpenID Connect names PocketBase's dashboard offers; each entry has an SVG logo and
    // nothing of a provider's configuration.
    assert.deepEqual(res.body.filter((p: { name: string }) => p.name.startsWith('oidc')).map((p: { name: string; displayName: string }) => [p.name, p.displayName]), [['oidc', 'OIDC'], ['oidc2', 'OIDC'], ['oidc3', 'OIDC']]);
    for (const p of res.body) {
      assert.match(p.logo, /^<svg /, p.name);
      assert.deepEqual(Object.keys(p).sort(), ['displayName', 'logo', 'name']);
    }
    assert.equal((await server.request('GET', '/api/collections/meta/oauth2-providers', { token: user.token })).status, 403);
  });

  test('a collection create without a body, or a field without a name, names what is missing', async () => {
    const empty = await server.request('POST', '/api/collections', { token: server.adminToken });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.data.name.code, 'validation_required');
    const nameless = await server.admin('POST', '/api/collections', { body: { name: 'nameless', fields: [{ type: 'text' }] } });
    assert.equal(nameless.status, 400);
    assert.match(JSON.stringify(nameless.body.data), /validation_required/);
  });

  test('/api/crons is for superusers; without hooks it lists only the server’s own jobs', async () => {
    assert.equal((await server.request('GET', '/api/crons')).status, 401);
    assert.equal((await server.request('GET', '/api/crons', { token: user.token })).status, 403);
    const list = await server.admin('GET', '/api/crons');
    assert.equal(list.status, 200);
    assert.ok(list.body.every((j: { id: string }) => /^__pb\w+__$/.test(j.id)), JSON.stringify(list.body));
    assert.equal((await server.admin('POST', '/api/crons/nightly')).status, 404);
  });
});
