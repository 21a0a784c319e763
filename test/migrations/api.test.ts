import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { acquireApplyLock } from '../../src/migrations/lock.ts';
import { zipEntries } from '../../src/lib/zip.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { databaseOf, indexExists, relationExists } from '../helpers/inspect.ts';
import { onPostgres } from '../helpers/postgres.ts';
import { apply, saveMigration, statusOf } from './helpers.ts';

describe('migrations API', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('is for administrators only', async () => {
    assert.equal((await server.request('GET', '/api/migrations')).status, 401);
    const user = await createUser(server, 'someone@example.com');
    const res = await server.request('GET', '/api/migrations/status', { token: user.token });
    assert.equal(res.status, 403);
    assert.equal((await server.request('POST', '/api/migrations/apply-pending', { token: user.token })).status, 403);
  });

  test('the state table: generate → pending → apply → applied → rollback → pending → delete', async () => {
    await createCollection(server, { name: 'notes', type: 'base', fields: [{ name: 'title', type: 'text', required: true }], listRule: '' });
    const gen = await server.admin('GET', '/api/migrations/generate?name=add%20notes&description=first');
    assert.equal(gen.status, 200, gen.text);
    const { version } = gen.body;
    assert.match(version, /^\d{8}_\d{6}_\d{3}$/);
    assert.equal(gen.body.name, 'add notes');
    assert.match(gen.body.yaml, /create_table:\n\s+name: notes/);
    assert.equal(gen.body.migration.databases.main.collections.notes.update_rules.list, '');
    assert.equal(gen.body.migration.description, 'first');

    let list = await server.admin('GET', '/api/migrations');
    const item = list.body.items.find((i: any) => i.version === version);
    assert.deepEqual(
      { status: item.status, name: item.name, description: item.description, applied_at: item.applied_at, modified: item.modified },
      { status: 'pending', name: 'add notes', description: 'first', applied_at: null, modified: false },
    );
    assert.ok(item.databases.main.collections.notes.create_table);
    let status = await server.admin('GET', '/api/migrations/status');
    assert.deepEqual(status.body, { appliedCount: 0, pendingCount: 1, failedCount: 0, lastAppliedVersion: null });

    const applied = await apply(server, version);
    assert.equal(applied.status, 200, applied.text);
    assert.equal(applied.body.status, 'applied');
    assert.ok(applied.body.applied_at);
    status = await server.admin('GET', '/api/migrations/status');
    assert.deepEqual(status.body, { appliedCount: 1, pendingCount: 0, failedCount: 0, lastAppliedVersion: version });
    // Generated here, so applying it changed nothing, and the recorded schema now matches the live one.
    assert.equal((await server.admin('GET', '/api/collections/notes')).body.listRule, '');
    assert.deepEqual((await server.admin('GET', '/api/migrations/generate')).body, { changes: false });
    assert.equal((await apply(server, version)).status, 409);
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 409);

    const rolled = await server.admin('POST', `/api/migrations/${version}/rollback`);
    assert.equal(rolled.status, 200, rolled.text);
    assert.equal(rolled.body.status, 'pending');
    assert.equal(rolled.body.applied_at, null);
    assert.equal((await server.admin('POST', `/api/migrations/${version}/rollback`)).status, 409);

    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 204);
    list = await server.admin('GET', '/api/migrations');
    assert.equal(list.body.items.some((i: any) => i.version === version), false);
    assert.equal((await server.services.migrations.files.find(version)), undefined);
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 404);
  });

  test('apply creates, rollback returns to the snapshot, re-apply adopts the kept table', async () => {
    const version = await saveMigration(server, {
      name: 'tasks',
      databases: {
        main: {
          collections: {
            tasks: {
              create_table: { name: 'tasks', type: 'base', schema: [{ name: 'title', type: 'text' }, { name: 'done', type: 'bool' }] },
              add_indexes: [{ name: 'idx_tasks_title', sql: 'CREATE INDEX idx_tasks_title ON tasks (title)' }],
              update_rules: { list: '', view: '' },
            },
          },
        },
      },
    });
    assert.equal((await apply(server, version)).status, 200);
    const tasks = await server.admin('GET', '/api/collections/tasks');
    assert.deepEqual(tasks.body.schema.map((f: any) => f.name), ['title', 'done']);
    assert.deepEqual(tasks.body.indexes, ['CREATE INDEX idx_tasks_title ON tasks (title)']);
    assert.equal(tasks.body.listRule, '');
    const rec = await server.request('POST', '/api/collections/tasks/records', { token: server.adminToken, body: { title: 'kept' } });
    assert.equal(rec.status, 200);

    assert.equal((await server.admin('POST', `/api/migrations/${version}/rollback`)).status, 200);
    assert.equal((await server.admin('GET', '/api/collections/tasks')).status, 404);
    const main = await databaseOf(server);
    assert.equal((await main.get<{ title: string }>('SELECT title FROM tasks'))?.title, 'kept', 'a soft drop keeps the table and its rows');
    assert.equal(await indexExists(main, 'idx_tasks_title'), false, 'the index was reverted');

    assert.equal((await apply(server, version)).status, 200);
    const again = await server.admin('GET', '/api/collections/tasks/records');
    assert.deepEqual(again.body.items.map((r: any) => r.title), ['kept']);
    assert.equal((await server.admin('POST', `/api/migrations/${version}/rollback`)).status, 200);
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 204);
  });

  test("a base table's fields named like auth columns (email, password, tokenKey) are its own", async () => {
    const version = await saveMigration(server, {
      name: 'logins',
      databases: {
        main: {
          collections: {
            logins: {
              create_table: { name: 'logins', type: 'base', schema: ['email', 'password', 'tokenKey', 'verified'].map((name) => ({ name, type: 'text' })) },
            },
          },
        },
      },
    });
    assert.equal((await apply(server, version)).status, 200);
    const logins = await server.admin('GET', '/api/collections/logins');
    assert.deepEqual(logins.body.schema.map((f: any) => f.name), ['email', 'password', 'tokenKey', 'verified']);
    const rec = await server.admin('POST', '/api/collections/logins/records', { body: { email: 'a@b.c', password: 'plain', tokenKey: 'k', verified: 'yes' } });
    assert.equal(rec.status, 200, rec.text);
    assert.equal(rec.body.password, 'plain');
  });

  test('drop_columns keeps the data in the file and rollback brings the field back with its values', async () => {
    await createCollection(server, { name: 'people', type: 'base', fields: [{ name: 'name', type: 'text' }, { name: 'nickname', type: 'text' }] });
    const created = await server.admin('POST', '/api/collections/people/records', { body: { name: 'Ada', nickname: 'countess' } });
    assert.equal(created.status, 200);
    const version = await saveMigration(server, { name: 'drop nickname', databases: { main: { collections: { people: { drop_columns: ['nickname'] } } } } });
    assert.equal((await apply(server, version)).status, 200);

    const fields = (await server.admin('GET', '/api/collections/people')).body.schema.map((f: any) => f.name);
    assert.deepEqual(fields, ['name']);
    const record = (await server.admin('GET', `/api/collections/people/records/${created.body.id}`)).body;
    assert.equal(record.nickname, undefined);
    const row = await (await databaseOf(server)).get<{ nickname: string }>('SELECT nickname FROM people WHERE id = ?', [created.body.id]);
    assert.equal(row?.nickname, 'countess');

    assert.equal((await server.admin('POST', `/api/migrations/${version}/rollback`)).status, 200);
    const back = (await server.admin('GET', `/api/collections/people/records/${created.body.id}`)).body;
    assert.equal(back.nickname, 'countess');
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 204);
  });

  test('a migration over two databases that fails in the second leaves both unchanged and is failed', async () => {
    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'second' } })).status, 200);
    const version = await saveMigration(server, {
      name: 'two dbs',
      databases: {
        main: { collections: { alpha: { create_table: { name: 'alpha', type: 'base', schema: [{ name: 'a', type: 'text' }] } } } },
        second: {
          collections: {
            beta: { create_table: { name: 'beta', type: 'base', schema: [{ name: 'b', type: 'text' }] } },
            broken: { create_views: [{ name: 'broken', sql: 'SELECT id FROM no_such_table' }] },
          },
        },
        third: { collections: { gamma: { create_table: { name: 'gamma', type: 'base', schema: [] } } } },
      },
    });
    const res = await apply(server, version);
    assert.equal(res.status, 400);
    // The database's own words for the missing table.
    const missing = onPostgres ? /relation "no_such_table" does not exist/ : /no such table/;
    assert.match(res.body.message, new RegExp(`failed: .*broken.*${missing.source}`));

    assert.equal(await statusOf(server, version), 'failed');
    const item = (await server.admin('GET', '/api/migrations')).body.items.find((i: any) => i.version === version);
    assert.match(item.error, missing);
    assert.equal((await server.admin('GET', '/api/collections/alpha')).status, 404);
    assert.equal((await server.admin('GET', '/api/collections/beta', { db: 'second' })).status, 404);
    for (const [db, table] of [['main', 'alpha'], ['second', 'beta'], ['second', 'broken']]) {
      assert.equal(await relationExists(await databaseOf(server, db), table), false, `${db}.${table}`);
    }
    const dbs = (await server.admin('GET', '/api/databases')).body.map((d: any) => d.name);
    assert.deepEqual(dbs, ['main', 'second'], 'the database the failed migration created is gone again');
    assert.equal((await server.admin('GET', '/api/migrations/status')).body.failedCount, 1);

    // A failed migration can be deleted (or fixed and applied again).
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 204);
  });

  test('a migration naming a missing database creates it', async () => {
    const version = await saveMigration(server, {
      name: 'analytics',
      databases: { analytics: { collections: { events: { create_table: { name: 'events', type: 'base', schema: [{ name: 'kind', type: 'text' }] } } } } },
    });
    assert.equal((await apply(server, version)).status, 200);
    assert.equal((await server.admin('GET', '/api/collections/events', { db: 'analytics' })).status, 200);
    assert.equal((await server.admin('POST', `/api/migrations/${version}/rollback`)).status, 200);
    assert.equal((await server.admin('GET', '/api/collections/events', { db: 'analytics' })).status, 404);
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 204);
  });

  test('only the latest applied migration can be rolled back, and not once its file changed', async () => {
    const first = await saveMigration(server, { name: 'one', databases: { main: { collections: { one: { create_table: { name: 'one', type: 'base', schema: [] } } } } } });
    const second = await saveMigration(server, { name: 'two', databases: { main: { collections: { two: { create_table: { name: 'two', type: 'base', schema: [] } } } } } });
    const pending = await server.admin('POST', '/api/migrations/apply-pending');
    assert.equal(pending.status, 200, pending.text);
    assert.deepEqual(pending.body, { applied: [first, second] });

    const refused = await server.admin('POST', `/api/migrations/${first}/rollback`);
    assert.equal(refused.status, 409);
    assert.match(refused.body.message, new RegExp(second));

    const { fileName } = (await server.services.migrations.files.find(second))!;
    const file = `${server.dir}/migrations/${fileName}`;
    const { readFileSync, writeFileSync } = await import('node:fs');
    const original = readFileSync(file, 'utf8');
    // The file is the one in the directory on SQLite; on PostgreSQL its text in the database, which
    // the directory only mirrors (an edit of the mirror alone does not count).
    const system = server.services.registry.system;
    const edit = async (text: string) => {
      if (!onPostgres) return writeFileSync(file, text);
      await system.run('UPDATE _migration_files SET text = ? WHERE version = ?', [text, second]);
    };
    if (onPostgres) {
      writeFileSync(file, `${original}# edited in the mirror only\n`);
      const mirrorOnly = (await server.admin('GET', '/api/migrations')).body.items.find((i: any) => i.version === second);
      assert.equal(mirrorOnly.modified, false, 'the database holds the file');
      writeFileSync(file, original);
    }
    await edit(`${original}# edited after apply\n`);
    const item = (await server.admin('GET', '/api/migrations')).body.items.find((i: any) => i.version === second);
    assert.equal(item.modified, true);
    const modified = await server.admin('POST', `/api/migrations/${second}/rollback`);
    assert.equal(modified.status, 409);
    assert.match(modified.body.message, /modified/);
    assert.equal((await server.admin('GET', '/api/collections/two')).status, 200);

    await edit(original);
    assert.equal((await server.admin('POST', `/api/migrations/${second}/rollback`)).status, 200);
    assert.equal((await server.admin('POST', `/api/migrations/${first}/rollback`)).status, 200);
    for (const v of [first, second]) assert.equal((await server.admin('DELETE', `/api/migrations/${v}`)).status, 204);
  });

  test('applying while another apply runs is refused, not interleaved', async () => {
    const version = await saveMigration(server, { name: 'locked', databases: { main: { collections: { locked: { create_table: { name: 'locked', type: 'base', schema: [] } } } } } });
    const release = await acquireApplyLock(server.services.registry);
    try {
      const res = await apply(server, version);
      assert.equal(res.status, 409);
      assert.match(res.body.message, /Another migration/);
      assert.equal((await server.admin('POST', '/api/migrations/apply-pending')).status, 409);
    } finally {
      await release();
    }
    assert.equal(await statusOf(server, version), 'pending');

    // Two applies at once: one runs, the other is refused (by the lock, or as already applied).
    const statuses = (await Promise.all([apply(server, version), apply(server, version)])).map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 409]);
    assert.equal(await statusOf(server, version), 'applied');
    assert.equal((await server.admin('POST', `/api/migrations/${version}/rollback`)).status, 200);
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 204);
  });

  test('views are read-only collections readable through the records API', async () => {
    await createCollection(server, { name: 'articles', type: 'base', fields: [{ name: 'title', type: 'text' }, { name: 'score', type: 'number' }, { name: 'published', type: 'bool' }] });
    for (const [title, published] of [['draft', false], ['live', true]] as const) {
      assert.equal((await server.admin('POST', '/api/collections/articles/records', { body: { title, score: 3, published } })).status, 200);
    }
    const version = await saveMigration(server, {
      name: 'published view',
      databases: {
        main: {
          collections: {
            published_articles: {
              create_views: [{ name: 'published_articles', sql: 'SELECT id, title, score * 2 AS double_score FROM articles WHERE published = TRUE' }],
              update_rules: { list: '', view: '' },
            },
          },
        },
      },
    });
    assert.equal((await apply(server, version)).status, 200, 'view');
    const meta = (await server.admin('GET', '/api/collections/published_articles')).body;
    assert.equal(meta.type, 'view');
    // An expression has no declared type on SQLite (a json field); PostgreSQL knows it is a number.
    assert.deepEqual(meta.schema.map((f: any) => [f.name, f.type]), [['title', 'text'], ['double_score', onPostgres ? 'number' : 'json']]);
    const list = await server.request('GET', '/api/collections/published_articles/records');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.items.map((r: any) => [r.title, r.double_score]), [['live', 6]]);
    const one = await server.request('GET', `/api/collections/published_articles/records/${list.body.items[0].id}`);
    assert.equal(one.body.title, 'live');
    // As PocketBase: a view that selects no created/updated has none in its records.
    for (const record of [one.body, list.body.items[0]]) assert.ok(!('created' in record) && !('updated' in record), JSON.stringify(record));
    const write = await server.admin('POST', '/api/collections/published_articles/records', { body: { title: 'x' } });
    assert.equal(write.status, 400);
    // Its rules change through the collections API too, as PocketBase's (its SQL as well: test/collections).
    assert.equal((await server.admin('PATCH', '/api/collections/published_articles', { body: { listRule: '' } })).status, 200);

    assert.equal((await server.admin('POST', `/api/migrations/${version}/rollback`)).status, 200);
    assert.equal((await server.admin('GET', '/api/collections/published_articles')).status, 404);
    assert.equal(await relationExists(await databaseOf(server), 'published_articles'), false);
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 204);
  });

  test('create_fts keeps a full-text index in sync and lists rank by it', async () => {
    await createCollection(server, { name: 'docs', type: 'base', fields: [{ name: 'title', type: 'text' }, { name: 'body', type: 'editor' }] });
    const add = (title: string, body: string) => server.admin('POST', '/api/collections/docs/records', { body: { title, body } });
    await add('Gardening', 'tomatoes and basil');
    await add('Cooking with tomatoes', 'tomatoes tomatoes tomatoes, a sauce of tomatoes');
    const version = await saveMigration(server, {
      name: 'docs search',
      databases: { main: { collections: { docs: { create_fts: { fields: ['title', 'body'], tokenize: 'porter unicode61' } } } } },
    });
    assert.equal((await apply(server, version)).status, 200);

    const search = (terms: string) => server.admin('GET', `/api/collections/docs/records?search=${encodeURIComponent(terms)}`);
    let res = await search('tomato');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.items.map((r: any) => r.title), ['Cooking with tomatoes', 'Gardening'], 'indexed existing rows, best match first');
    assert.equal(res.body.totalItems, 2);

    const later = await add('Bread', 'flour, water, salt');
    assert.deepEqual((await search('flour')).body.items.map((r: any) => r.id), [later.body.id], 'insert trigger');
    await server.admin('PATCH', `/api/collections/docs/records/${later.body.id}`, { body: { body: 'rye and yeast' } });
    assert.deepEqual((await search('flour')).body.items, [], 'update trigger removed the old words');
    assert.equal((await search('rye')).body.items.length, 1);
    await server.admin('DELETE', `/api/collections/docs/records/${later.body.id}`);
    assert.deepEqual((await search('rye')).body.items, [], 'delete trigger');

    res = await search(`" OR 1=1 -- ' NEAR( *`);
    assert.equal(res.status, 200, 'FTS syntax in the input is only words');
    assert.deepEqual(res.body.items, []);
    // Control characters separate words (a NUL ended SQLite's query text early: 500).
    for (const terms of ['\u0000', 'tomato\u0000sauce', 'sauce\u0007']) {
      res = await search(terms);
      assert.equal(res.status, 200, `${JSON.stringify(terms)}: ${res.text}`);
    }
    assert.deepEqual((await search('tomatoes\u0000sauce')).body.items.map((r: any) => r.title), ['Cooking with tomatoes']);
    const noIndex = await server.admin('GET', '/api/collections/people/records?search=ada');
    assert.equal(noIndex.status, 400);

    assert.equal((await server.admin('POST', `/api/migrations/${version}/rollback`)).status, 200);
    assert.equal((await search('tomato')).status, 400);
    assert.equal((await server.admin('DELETE', `/api/migrations/${version}`)).status, 204);
  });

  test('bad files are clear 4xx answers and save nothing', async () => {
    const before = (await server.admin('GET', '/api/migrations')).body.items.length;

    const malformed = await server.admin('POST', '/api/migrations/upload', {
      raw: 'name: broken\ndatabases:\n  main: {collections: [\n',
      headers: { 'content-type': 'application/yaml' },
    });
    assert.equal(malformed.status, 400);
    assert.match(malformed.body.message, /line \d+, column \d+/);
    assert.equal(typeof malformed.body.data.file.line, 'number');

    const unknown = await server.admin('POST', '/api/migrations/save', {
      body: { yaml: 'name: x\ndatabases:\n  main:\n    collections:\n      posts:\n        truncate_table: true\n' },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /line 6, column 9.*unknown operation "truncate_table"/);

    const notYaml = await server.admin('POST', '/api/migrations/upload', { raw: 'x', headers: { 'content-type': 'text/plain' } });
    assert.equal(notYaml.status, 415);
    assert.equal((await server.admin('POST', '/api/migrations/save', { body: { yaml: 5 } })).status, 400);
    assert.equal((await server.admin('POST', '/api/migrations/save', { body: { name: 'x', databases: { 'Bad-Name': {} } } })).status, 400);
    assert.equal((await server.admin('POST', '/api/migrations/not_a_version/apply')).status, 400);
    assert.equal((await server.admin('POST', '/api/migrations/20200101_000000_000/apply')).status, 404);
    assert.equal((await server.admin('GET', '/api/migrations/load')).status, 400);

    assert.equal((await server.admin('GET', '/api/migrations')).body.items.length, before);
  });

  test('upload, load, download; duplicate versions with other content are a 409', async () => {
    const yaml = '# kept comment\nversion: 20240102_030405_006\nname: uploaded\ndatabases:\n  main:\n    collections:\n      up:\n        create_table: {name: up, type: base, schema: []}\n';
    const form = new FormData();
    form.append('file', new Blob([yaml], { type: 'application/yaml' }), 'm.yaml');
    const up = await server.admin('POST', '/api/migrations/upload', { raw: form });
    assert.equal(up.status, 200, up.text);
    assert.equal(up.body.version, '20240102_030405_006');
    assert.equal(up.body.yaml, yaml);

    const same = await server.admin('POST', '/api/migrations/upload', { raw: yaml, headers: { 'content-type': 'application/yaml' } });
    assert.equal(same.status, 200, 'the same file again is fine');
    const other = await server.admin('POST', '/api/migrations/upload', { raw: yaml.replace('schema: []', 'schema: [{name: x, type: text}]'), headers: { 'content-type': 'application/yaml' } });
    assert.equal(other.status, 409);
    assert.equal((await server.admin('POST', '/api/migrations/save', { body: { yaml: yaml.replace('uploaded', 'renamed') } })).status, 409);

    const load = await server.admin('GET', '/api/migrations/load?version=20240102_030405_006');
    assert.equal(load.status, 200);
    assert.deepEqual(Object.keys(load.body).sort(), ['migration', 'name', 'version', 'yaml']);
    assert.equal(load.body.yaml, yaml);
    const download = await server.admin('GET', '/api/migrations/20240102_030405_006/download');
    assert.equal(download.status, 200);
    assert.match(download.headers.get('content-type')!, /application\/yaml/);
    assert.equal(download.text, yaml);

    // Saved without a version, a migration gets a new one, written into the file, comments kept.
    const fresh = await server.admin('POST', '/api/migrations/save', { body: { yaml: '# hello\nname: fresh\n' } });
    assert.equal(fresh.status, 200);
    assert.match(fresh.body.yaml, /# hello/);
    assert.match(fresh.body.yaml, new RegExp(`version: "?${fresh.body.version}`));
    for (const v of ['20240102_030405_006', fresh.body.version]) assert.equal((await server.admin('DELETE', `/api/migrations/${v}`)).status, 204);
  });

  test('an upload must carry its version and name: without either it is a 400 and saves nothing', async () => {
    const before = await server.admin('GET', '/api/migrations');
    const upload = (yaml: string) => server.admin('POST', '/api/migrations/upload', { raw: yaml, headers: { 'content-type': 'application/yaml' } });

    const noVersion = await upload('# from elsewhere\nname: unversioned\ndatabases: {}\n');
    assert.equal(noVersion.status, 400, noVersion.text);
    assert.equal(noVersion.body.data.file.code, 'validation_invalid_migration');
    assert.equal(noVersion.body.data.file.path, 'version');
    assert.match(noVersion.body.message, /version/);

    const form = new FormData();
    form.append('file', new Blob(['name: unversioned\n'], { type: 'application/yaml' }), 'm.yaml');
    assert.equal((await server.admin('POST', '/api/migrations/upload', { raw: form })).status, 400, 'multipart too');

    for (const yaml of ['version: 20240104_000000_000\ndatabases: {}\n', 'version: 20240104_000000_000\nname: ""\n', 'version: 20240104_000000_000\nname: [a]\n']) {
      const noName = await upload(yaml);
      assert.equal(noName.status, 400, `${yaml}: ${noName.text}`);
      assert.equal(noName.body.data.file.path, 'name');
    }
    const badVersion = await upload('version: 2024-01-04\nname: x\n');
    assert.equal(badVersion.status, 400);
    assert.equal(badVersion.body.data.file.path, 'version');

    const after = await server.admin('GET', '/api/migrations');
    assert.deepEqual(after.body.items, before.body.items);
  });

  test('the same file uploaded twice is one migration; the second upload changes nothing', async () => {
    const yaml = 'version: 20240105_000000_000\nname: twice\ndatabases: {}\n';
    const upload = () => server.admin('POST', '/api/migrations/upload', { raw: yaml, headers: { 'content-type': 'application/yaml' } });
    const first = await upload();
    assert.equal(first.status, 200, first.text);
    const count = (await server.admin('GET', '/api/migrations')).body.items.length;
    const second = await upload();
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.version, first.body.version);
    assert.equal(second.body.yaml, yaml);
    const items = (await server.admin('GET', '/api/migrations')).body.items;
    assert.equal(items.length, count);
    assert.equal(items.filter((i: any) => i.name === 'twice').length, 1);
    assert.equal((await server.admin('DELETE', '/api/migrations/20240105_000000_000')).status, 204);
  });

  test('import is all or nothing: ../ entries, conflicts and oversized archives save nothing', async () => {
    const before = (await server.admin('GET', '/api/migrations')).body.items.length;
    const good = 'version: 20240103_000000_000\nname: good\n';
    const evilZip = await zipEntries([
      { name: '20240103_000000_000_good.yaml', data: Buffer.from(good) },
      { name: 'xx_escape.yaml', data: Buffer.from('name: evil\n') },
    ]);
    // yazl refuses to write "../" names, so the name is patched into the archive (same length).
    const patched = Buffer.from(evilZip.toString('latin1').split('xx_escape.yaml').join('../escape.yaml'), 'latin1');
    const zipSlip = await server.admin('POST', '/api/migrations/import', { raw: patched, headers: { 'content-type': 'application/zip' } });
    assert.equal(zipSlip.status, 400);
    assert.match(zipSlip.body.message, /\.\.\/escape\.yaml/);

    const stray = await zipEntries([{ name: '20240103_000000_000_good.yaml', data: Buffer.from(good) }, { name: 'notes.txt', data: Buffer.from('hi') }]);
    assert.equal((await server.admin('POST', '/api/migrations/import', { raw: stray, headers: { 'content-type': 'application/zip' } })).status, 400);

    const big = Buffer.alloc(6 * 1024 * 1024, 1);
    assert.equal((await server.admin('POST', '/api/migrations/import', { raw: big, headers: { 'content-type': 'application/zip' } })).status, 413);
    const bomb = await zipEntries([{ name: '20240103_000000_001_big.yaml', data: Buffer.alloc(2 * 1024 * 1024, 0x20) }]);
    assert.equal((await server.admin('POST', '/api/migrations/import', { raw: bomb, headers: { 'content-type': 'application/zip' } })).status, 413);
    assert.equal((await server.admin('POST', '/api/migrations/import', { raw: Buffer.from('not a zip'), headers: { 'content-type': 'application/zip' } })).status, 400);

    await server.admin('POST', '/api/migrations/upload', { raw: 'version: 20240103_000000_002\nname: present\n', headers: { 'content-type': 'application/yaml' } });
    const conflicting = await zipEntries([
      { name: '20240103_000000_000_good.yaml', data: Buffer.from(good) },
      { name: '20240103_000000_002_present.yaml', data: Buffer.from('version: 20240103_000000_002\nname: different\n') },
    ]);
    const conflict = await server.admin('POST', '/api/migrations/import', { raw: conflicting, headers: { 'content-type': 'application/zip' } });
    assert.equal(conflict.status, 409);
    assert.equal((await server.admin('GET', '/api/migrations')).body.items.length, before + 1, 'only the uploaded file, nothing of the archives');
    assert.equal((await server.services.migrations.files.find('20240103_000000_000')), undefined);

    const form = new FormData();
    const archive = await zipEntries([
      { name: '20240103_000000_000_good.yaml', data: Buffer.from(good) },
      { name: '20240103_000000_002_present.yaml', data: Buffer.from('version: 20240103_000000_002\nname: present\n') },
    ]);
    form.append('file', new Blob([new Uint8Array(archive)]), 'm.zip');
    const ok = await server.admin('POST', '/api/migrations/import', { raw: form });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body, { imported: ['20240103_000000_000'], skipped: ['20240103_000000_002'] });
    for (const v of ['20240103_000000_000', '20240103_000000_002']) assert.equal((await server.admin('DELETE', `/api/migrations/${v}`)).status, 204);
  });
  test('views and full-text indexes of collections deleted through the collections API do not block migrations', async () => {
    await createCollection(server, { name: 'memos', type: 'base', fields: [{ name: 'text', type: 'text' }] });
    await server.admin('POST', '/api/collections/memos/records', { body: { text: 'remember the milk' } });
    const ops = (sql: string) => ({
      memos: { create_fts: { fields: ['text'] } },
      memo_view: { create_views: [{ name: 'memo_view', sql }] },
    });
    const first = await saveMigration(server, { name: 'memo search', databases: { main: { collections: ops('SELECT id, text FROM memos') } } });
    assert.equal((await apply(server, first)).status, 200);
    assert.equal((await server.admin('DELETE', '/api/collections/memo_view')).status, 204);
    assert.equal((await server.admin('DELETE', '/api/collections/memos')).status, 204);

    const second = await saveMigration(server, {
      name: 'memo search again',
      databases: {
        main: {
          collections: {
            ...ops('SELECT id, upper(text) AS loud FROM memos'),
            memos: { create_table: { name: 'memos', type: 'base', schema: [{ name: 'text', type: 'text' }] }, create_fts: { fields: ['text'] } },
          },
        },
      },
    });
    const res = await apply(server, second);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual((await server.admin('GET', '/api/collections/memos/records?search=milk')).body.items.map((r: any) => r.text), ['remember the milk']);
    assert.deepEqual((await server.admin('GET', '/api/collections/memo_view/records')).body.items.map((r: any) => r.loud), ['REMEMBER THE MILK']);
  });
  test('a view cannot read password hashes, token keys or internal tables, however it aliases them', async () => {
    const before = (await server.admin('GET', '/api/migrations')).body.items.length;
    for (const sql of [
      'SELECT id, passwordHash AS x FROM users',
      'SELECT id, substr("tokenKey", 1) AS y FROM users',
      'SELECT id, [lastResetSentAt] AS z FROM users',
      'SELECT id, keyHash AS k FROM _api_keys',
      'SELECT u.id FROM users u JOIN `_auth_tokens` t ON 1',
      'SELECT name AS id FROM sqlite_master',
    ]) {
      const res = await server.admin('POST', '/api/migrations/save', {
        body: { name: 'leak', databases: { main: { collections: { leak: { create_views: [{ name: 'leak', sql }] } } } } },
      });
      assert.equal(res.status, 400, sql);
      assert.match(res.text, /views cannot expose/, sql);
    }
    assert.equal((await server.admin('GET', '/api/migrations')).body.items.length, before, 'nothing was saved');
    // The same words inside a string literal are only text.
    const ok = await saveMigration(server, {
      name: 'harmless',
      databases: { main: { collections: { harmless: { create_views: [{ name: 'harmless', sql: "SELECT id, 'passwordHash' AS label FROM users" }] } } } },
    });
    assert.equal((await server.admin('DELETE', `/api/migrations/${ok}`)).status, 204);
  });
  test('rules of a view are checked against the fields inferred from its columns', async () => {
    const collections = server.services.collections;
    const original = collections.validateRule;
    // Stands in for the full compile check of the rules domain: the left operand must be a field.
    collections.validateRule = (c, rule) => {
      const name = rule.split(/\s*[=!<>~]/)[0].trim();
      return ['id', 'created', 'updated'].includes(name) || c.fields.some((f) => f.name === name) ? undefined : `unknown field "${name}"`;
    };
    try {
      const view = (name: string, rule: string) =>
        saveMigration(server, { name, databases: { main: { collections: { [name]: { create_views: [{ name, sql: 'SELECT id, title FROM articles' }], update_rules: { list: rule } } } } } });
      const good = await view('titled', 'title != ""');
      assert.equal((await apply(server, good)).status, 200);
      assert.equal((await server.admin('GET', '/api/collections/titled')).body.listRule, 'title != ""');
      const bad = await view('untitled', 'nope = 1');
      const res = await apply(server, bad);
      assert.equal(res.status, 400);
      assert.match(res.body.message, /untitled \(update_rules\): listRule: unknown field "nope"/);
      assert.equal((await server.admin('GET', '/api/collections/untitled')).status, 404);
      assert.equal(await relationExists(await databaseOf(server), 'untitled'), false);
    } finally {
      collections.validateRule = original;
    }
  });
});
