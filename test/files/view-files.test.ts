import assert from 'node:assert/strict';
import Sqlite from 'better-sqlite3';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { PB_TESTS, pocketbaseToken, readPocketBase } from '../import/pb-fixtures.ts';

/**
 * Files of view records. A view's file column reads a file field of a collection its SQL names;
 * `/api/files/<view>/<id>/<name>` answers the file when the view's record holds the name, under the
 * view's own rule and its field's `protected` flag, with the bytes of the record the view read it
 * from (found through views on views, and by the name when the view's ids are not its source's).
 * Views with file fields come from PocketBase (Cairn infers its own views' fields from their
 * columns), so the data is PocketBase's test data, imported, plus one view of our own added to the
 * copy before the import: its rows have demo3's ids and demo1's files.
 */

const FAR = 2524604461;
type Row = Record<string, any>;

describe('files of view records (PocketBase test data)', () => {
  let work: string;
  let dir: string;
  let server: TestServer;
  let userFileToken: string;
  const demo1 = (record: string, name: string) => readFileSync(path.join(PB_TESTS, 'storage', 'wsmn24bux7wo113', record, name));

  before(async () => {
    work = mkdtempSync(path.join(tmpdir(), 'cairn-viewfiles-src-'));
    cpSync(PB_TESTS, work, { recursive: true });
    const db = new Sqlite(path.join(work, 'data.db'));
    try {
      const fields = [
        { id: 'text3208210256', name: 'id', type: 'text', system: true, primaryKey: true, required: true, hidden: false, presentable: false, autogeneratePattern: '', min: 0, max: 0, pattern: '^[a-z0-9]+$' },
        { id: 'cross_gallery', name: 'gallery', type: 'file', system: false, required: false, hidden: false, presentable: false, maxSelect: 99, maxSize: 0, mimeTypes: [], thumbs: [], protected: false },
      ];
      const query = "SELECT demo3.id AS id, demo1.file_many AS gallery FROM demo3 JOIN demo1 ON demo1.id = '84nmscqy84lsi1t' WHERE demo3.title = 'test1'";
      db.prepare(
        "INSERT INTO _collections (id, system, type, name, fields, listRule, viewRule, createRule, updateRule, deleteRule, options, created, updated, indexes) VALUES ('crossfiles00001', 0, 'view', 'cross_files', ?, '', '', NULL, NULL, NULL, ?, '2024-01-01 00:00:00.000Z', '2024-01-01 00:00:00.000Z', '[]')",
      ).run(JSON.stringify(fields), JSON.stringify({ viewQuery: query }));
    } finally {
      db.close();
    }
    const source = readPocketBase(path.join(PB_TESTS, 'data.db'));
    try {
      const user = source.prepare("SELECT id, tokenKey FROM users WHERE email = 'test@example.com'").get() as Row;
      const options = JSON.parse((source.prepare("SELECT options FROM _collections WHERE id = '_pb_users_auth_'").get() as Row).options);
      userFileToken = pocketbaseToken({ id: user.id, type: 'file', collectionId: '_pb_users_auth_', exp: FAR }, user.tokenKey + options.fileToken.secret);
    } finally {
      source.close();
    }
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-viewfiles-'));
    const admin = await runCli(['admin', 'create', ADMIN_EMAIL, ADMIN_PASSWORD, '--dir', dir]);
    assert.equal(admin.code, 0, admin.stderr);
    const imported = await runCli(['import', 'pocketbase', work, '--dir', dir], {}, 120_000);
    assert.equal(imported.code, 0, imported.stderr);
    assert.doesNotMatch(imported.stdout, /cross_files: view not carried/, imported.stdout);
    server = await startServer({ dir });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    rmSync(work, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  const get = (url: string, method = 'GET') => fetch(`${server.url}${url}`, { method });

  test("a protected file of a view: the view's rule decides, the bytes are the source record's", async () => {
    // view1: `select … file_one … from demo1`, file_one protected, rule: signed in and bool = true.
    const url = '/api/files/view1/84nmscqy84lsi1t/test_d61b33QdDU.txt';
    const res = await get(`${url}?token=${userFileToken}`);
    assert.equal(res.status, 200);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), demo1('84nmscqy84lsi1t', 'test_d61b33QdDU.txt'));
    assert.equal(res.headers.get('cache-control'), 'private, no-store');
    assert.equal((await get(url)).status, 404, 'a guest fails the view rule');
    assert.equal((await get(`/api/files/view1/al1h9ijdeojtsjy/300_Jsjq7RdBgA.png?token=${userFileToken}`)).status, 404, 'a row with bool = false');
    const head = await get(`${url}?token=${userFileToken}`, 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(Number(head.headers.get('content-length')), demo1('84nmscqy84lsi1t', 'test_d61b33QdDU.txt').length);
  });

  test('a public file of a view on a view is found through both', async () => {
    // view2 reads view1, which reads demo1; view2's rules are public and file_many is not protected.
    const res = await get('/api/files/view2/84nmscqy84lsi1t/300_WlbFWSGmW9.png');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), demo1('84nmscqy84lsi1t', '300_WlbFWSGmW9.png'));
  });

  test("a view whose ids are not its source's finds the file by its name", async () => {
    const rows = await server.request('GET', '/api/collections/cross_files/records');
    assert.equal(rows.status, 200, rows.text);
    assert.deepEqual(rows.body.items.map((r: Row) => r.id), ['1tmknxy2868d869']);
    assert.ok(rows.body.items[0].gallery.includes('test_QZFjKjXchk.txt'), rows.text);
    const res = await get('/api/files/cross_files/1tmknxy2868d869/test_QZFjKjXchk.txt');
    assert.equal(res.status, 200);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), demo1('84nmscqy84lsi1t', 'test_QZFjKjXchk.txt'));
  });

  test("only names the view's record holds: another record's file, or one the view does not read, is a 404", async () => {
    assert.equal((await get('/api/files/view2/al1h9ijdeojtsjy/300_WlbFWSGmW9.png')).status, 404, "another row's file");
    assert.equal((await get('/api/files/view2/84nmscqy84lsi1t/300_Jsjq7RdBgA.png')).status, 404, 'file_one is not a column of view2');
    assert.equal((await get('/api/files/view2/84nmscqy84lsi1t/missing_abcdefghij.png')).status, 404);
    assert.equal((await get('/api/files/view2/missingmissing1/300_WlbFWSGmW9.png')).status, 404);
  });

  test("collections named by PocketBase's ids in file URLs", async () => {
    const res = await get('/api/files/_pb_users_auth_/4q1xlclmfloku33/300_1SEi6Q6U72.png');
    assert.equal(res.status, 200);
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), readFileSync(path.join(PB_TESTS, 'storage', '_pb_users_auth_', '4q1xlclmfloku33', '300_1SEi6Q6U72.png')));
    assert.equal((await get('/api/files/ib3m2700k5hlsjz/84nmscqy84lsi1t/300_WlbFWSGmW9.png')).status, 200, "view2 by its id");
    assert.equal((await get('/api/files/no_such_collection/84nmscqy84lsi1t/300_WlbFWSGmW9.png')).status, 404);
    assert.equal((await get('/api/files/a-b/84nmscqy84lsi1t/300_WlbFWSGmW9.png')).status, 404);
  });
});
