import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Queryable } from '../../src/storage/types.ts';
import { databaseOf, indexesOf, indexSqlOf } from '../helpers/inspect.ts';
import { databaseUrlFor, skipOn } from '../helpers/postgres.ts';
import { PgWireProxy } from '../helpers/pg-wire.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

// A collection's index may name PostgreSQL's index methods and operator classes, so that a `~`
// filter or rule over a large text field can be served by pg_trgm (`USING gin (body gin_trgm_ops)`)
// instead of lowering every row's text. SQLite has one kind of index: there they are refused by name.

const TRIGRAM = 'CREATE INDEX idx_docs_body_trgm ON docs USING gin (body gin_trgm_ops)';
const BODIES = ['A NEEDLE in caps', 'a needle in lower case', 'nothing here', '50% off', '500 items', 'under_score'];

const search = (server: TestServer, filter: string, db?: string) =>
  server.request('GET', `/api/collections/docs/records?perPage=100&sort=body&filter=${encodeURIComponent(filter)}`, { db });

async function bodiesFound(server: TestServer, filter: string, db?: string): Promise<string[]> {
  const res = await search(server, filter, db);
  assert.equal(res.status, 200, res.text);
  return res.body.items.map((r: { body: string }) => r.body);
}

async function makeDocs(server: TestServer, db?: string): Promise<void> {
  await createCollection(server, { name: 'docs', fields: [{ name: 'body', type: 'text' }], listRule: '', viewRule: '' }, db);
  for (const body of BODIES) {
    const res = await server.admin('POST', '/api/collections/docs/records', { body: { body }, db });
    assert.equal(res.status, 200, res.text);
  }
}

describe('index methods and operator classes on SQLite', { skip: skipOn('postgres', "SQLite's refusal") }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await makeDocs(server);
  });
  after(() => server?.close());

  test('are refused by name, and nothing of the change is kept', async () => {
    for (const [statement, named] of [
      [TRIGRAM, /USING gin, gin_trgm_ops: index methods and operator classes are PostgreSQL's/],
      ['CREATE INDEX idx_docs_body_btree ON docs USING btree (body)', /USING btree: index methods/],
      ['CREATE INDEX idx_docs_body_ops ON docs (body text_pattern_ops)', /text_pattern_ops: index methods/],
    ] as const) {
      const res = await server.admin('PATCH', '/api/collections/docs', { body: { indexes: ['CREATE INDEX idx_docs_plain ON docs (body)', statement] } });
      assert.equal(res.status, 400, res.text);
      assert.equal(res.body.data.indexes[1].code, 'validation_invalid_index_expression');
      assert.match(res.body.data.indexes[1].message, named);
      assert.deepEqual((await server.admin('GET', '/api/collections/docs')).body.indexes, []);
      assert.ok(!(await indexesOf(await databaseOf(server), 'docs')).includes('idx_docs_plain'), 'the valid index of the refused change is not made');
    }
    // The search answers as ever without it.
    assert.deepEqual(await bodiesFound(server, "body ~ 'needle'"), ['A NEEDLE in caps', 'a needle in lower case']);
  });
});

describe('index methods and operator classes on PostgreSQL', { skip: skipOn('sqlite', "PostgreSQL's index methods") }, () => {
  let server: TestServer;
  let proxy: PgWireProxy;
  let db: Queryable;

  before(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-index-methods-'));
    // Through a proxy that sees the statements, so the plan checked is the one of Cairn's own SQL.
    proxy = await PgWireProxy.start(await databaseUrlFor(dir));
    server = await startServer({ dir, env: { CAIRN_DATABASE_URL: proxy.url } });
    db = await databaseOf(server);
    await makeDocs(server);
  });
  after(async () => {
    await server?.close();
    await proxy?.close();
  });

  /** The plan of the count a `~` search runs, with sequential scans off: which index can serve it. */
  async function countPlan(): Promise<string> {
    proxy.reset();
    await bodiesFound(server, "body ~ 'needle'");
    const count = proxy.log.messages.find((m) => m.type === 'E' && /^SELECT COUNT\(\*\).* FROM "docs" t0 WHERE .*ILIKE/.test(m.text));
    assert.ok(count, 'the count of the search went through the proxy');
    const plan = await db.transaction(async (tx) => {
      // Six rows read fastest without any index; with sequential scans off the planner shows whether
      // one can serve the search at all.
      await tx.exec('SET LOCAL enable_seqscan = off');
      return tx.all<Record<string, string>>(`EXPLAIN ${count.text.replace('$1', '?')}`, ['%needle%']);
    });
    return plan.map((row) => Object.values(row)[0]).join('\n');
  }

  test("a trigram index serves `~`, with pg_trgm made on first use, and answers what the scan answered", async () => {
    const filters = ["body ~ 'needle'", "body ~ '50%'", "body ~ '%ITEMS'", "body ~ 'r_s'", "body !~ 'NEEDLE'"];
    const unindexed = await Promise.all(filters.map((f) => bodiesFound(server, f)));
    assert.deepEqual(unindexed[0], ['A NEEDLE in caps', 'a needle in lower case']);
    // As PocketBase: a value with a % of its own is the whole pattern (here: starts with 50).
    assert.deepEqual(unindexed[1], ['50% off', '500 items']);
    assert.deepEqual(unindexed[2], ['500 items']);
    assert.deepEqual(unindexed[3], ['under_score'], 'without a %, _ is a character');
    assert.doesNotMatch(await countPlan(), /idx_docs_body_trgm/);

    const res = await server.admin('PATCH', '/api/collections/docs', { body: { indexes: [TRIGRAM] } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.indexes, [TRIGRAM], 'the statement as it was given');
    assert.match((await indexSqlOf(db, 'idx_docs_body_trgm')) ?? '', /USING gin \(body \S*gin_trgm_ops\)/);
    assert.ok(await db.get("SELECT 1 AS found FROM pg_extension WHERE extname = 'pg_trgm'"));

    assert.match(await countPlan(), /idx_docs_body_trgm/);
    assert.deepEqual(await Promise.all(filters.map((f) => bodiesFound(server, f))), unindexed);

    // Taken out of the collection's indexes, it is dropped.
    assert.equal((await server.admin('PATCH', '/api/collections/docs', { body: { indexes: [] } })).status, 200);
    assert.equal(await indexSqlOf(db, 'idx_docs_body_trgm'), undefined);
  });

  test('another database (another schema) reaches the extension too', async () => {
    const made = await server.admin('POST', '/api/databases', { body: { name: 'second' } });
    assert.equal(made.status, 200, made.text);
    await makeDocs(server, 'second');
    const res = await server.admin('PATCH', '/api/collections/docs', { body: { indexes: [TRIGRAM.replace('idx_docs_body_trgm', 'idx_second_trgm')] }, db: 'second' });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(await bodiesFound(server, "body ~ 'NEEDLE'", 'second'), ['A NEEDLE in caps', 'a needle in lower case']);
  });

  test('other methods and operator classes pass through; an unknown method is refused by name', async () => {
    const indexes = ['CREATE INDEX idx_docs_hash ON docs USING hash (body)', 'CREATE INDEX idx_docs_prefix ON docs (body text_pattern_ops DESC)'];
    const res = await server.admin('PATCH', '/api/collections/docs', { body: { indexes } });
    assert.equal(res.status, 200, res.text);
    assert.match((await indexSqlOf(db, 'idx_docs_hash')) ?? '', /USING hash \(body\)/);
    assert.match((await indexSqlOf(db, 'idx_docs_prefix')) ?? '', /\(body text_pattern_ops DESC\)/);

    const unknown = await server.admin('PATCH', '/api/collections/docs', { body: { indexes: ['CREATE INDEX idx_docs_odd ON docs USING rum (body)'] } });
    assert.equal(unknown.status, 400, unknown.text);
    assert.match(unknown.body.data.indexes[0].message, /Unknown index method "rum" \(one of btree, hash, gin, gist, spgist, brin\)/);
    assert.equal(await indexSqlOf(db, 'idx_docs_odd'), undefined);
    assert.ok(await indexSqlOf(db, 'idx_docs_hash'), 'a refused change keeps the indexes before it');

    const badClass = await server.admin('PATCH', '/api/collections/docs', { body: { indexes: ['CREATE INDEX idx_docs_bad ON docs (body no_such_ops)'] } });
    assert.equal(badClass.status, 400, badClass.text);
    assert.equal(badClass.body.data.indexes[0].code, 'validation_invalid_index_expression');
  });
});
