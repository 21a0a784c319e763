import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { storedDatabases, systemStorageExists } from '../helpers/inspect.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

describe('databases and x-dbname', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('the main database exists from the start, with its storage (a file under databases/, or a schema)', async () => {
    const res = await server.admin('GET', '/api/databases');
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.map((d: any) => d.name),
      ['main'],
    );
    assert.match(res.body[0].created, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.deepEqual(await storedDatabases(server), ['main']);
    assert.ok(await systemStorageExists(server));
  });

  test('listing and creating databases is for administrators', async () => {
    assert.equal((await server.request('GET', '/api/databases')).status, 401);
    const res = await server.request('POST', '/api/databases', { body: { name: 'sneaky' } });
    assert.equal(res.status, 401);
    assert.equal(res.body.code, 401);
    assert.ok(!(await storedDatabases(server)).includes('sneaky'));
  });

  test('POST /api/databases creates one with the users collection; a second time is a 409', async () => {
    const res = await server.admin('POST', '/api/databases', { body: { name: 'shop' } });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'shop');
    assert.ok((await storedDatabases(server)).includes('shop'));
    const users = await server.admin('GET', '/api/collections/users', { db: 'shop' });
    assert.equal(users.status, 200);
    assert.equal(users.body.type, 'auth');
    const again = await server.admin('POST', '/api/databases', { body: { name: 'shop' } });
    assert.equal(again.status, 409);
    const list = await server.admin('GET', '/api/databases');
    assert.deepEqual(
      list.body.map((d: any) => d.name),
      ['main', 'shop'],
    );
  });

  test('five creates of one name at once: one 200, four 409s, and the database works', async () => {
    // Each 409 is answered once the database serves: a client told it exists can use it at once.
    const answers = await Promise.all(
      Array.from({ length: 5 }, async () => {
        const created = await server.admin('POST', '/api/databases', { body: { name: 'rush' } });
        const used = await server.admin('GET', '/api/collections/users/records', { db: 'rush' });
        return { status: created.status, text: created.text, used: used.status };
      }),
    );
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 409, 409, 409, 409], answers.map((a) => a.text).join('\n'));
    assert.deepEqual(answers.map((a) => a.used), [200, 200, 200, 200, 200]);
    assert.equal((await server.admin('POST', '/api/collections/users/records', { db: 'rush', body: { email: 'rush@example.com', password: 'rush-password-1', passwordConfirm: 'rush-password-1' } })).status, 200);
    assert.equal((await server.request('GET', '/api/health')).status, 200);
  });

  for (const [label, name] of [
    ['a path', '../x'],
    ['200 characters', 'a'.repeat(200)],
    ['upper case', 'Shop'],
    ['a leading digit', '1db'],
    ['a slash', 'a/b'],
    ['a dot', 'a.db'],
    ['empty', ''],
    ['a number', 42],
  ] as const) {
    test(`creating a database named with ${label} is a 400 and creates no storage`, async () => {
      const before = await storedDatabases(server);
      const files = readdirSync(server.dir).sort();
      const res = await server.admin('POST', '/api/databases', { body: { name } });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 400);
      assert.equal(res.body.data.name.code, 'validation_invalid_database_name');
      assert.deepEqual(await storedDatabases(server), before);
      assert.deepEqual(readdirSync(server.dir).sort(), files);
      assert.ok(!existsSync(path.join(server.dir, 'x.db')));
    });
  }

  test('an unknown database is a 404 and is never created by an ordinary request', async () => {
    for (const [method, p, body] of [
      ['GET', '/api/collections', undefined],
      ['POST', '/api/collections', { name: 'posts' }],
      ['GET', '/api/collections/users/records', undefined],
      ['POST', '/api/collections/users/records', { email: 'a@example.com' }],
    ] as const) {
      const res = await server.admin(method, p, { db: 'ghost', body });
      assert.equal(res.status, 404, `${method} ${p}`);
      assert.equal(res.body.message, 'Database "ghost" not found.');
    }
    assert.ok(!(await storedDatabases(server)).includes('ghost'));
  });

  test('hostile x-dbname values are refused with a 400 and touch no file or storage', async () => {
    const before = readdirSync(server.dir).sort();
    const stored = await storedDatabases(server);
    for (const name of ['../x', '../../etc/passwd', 'a'.repeat(200), 'main.db', 'main;drop', 'MAIN', '%2e%2e']) {
      const res = await server.admin('GET', '/api/collections', { db: name });
      assert.equal(res.status, 400, name);
      assert.equal(res.body.data.name.code, 'validation_invalid_database_name');
    }
    assert.deepEqual(readdirSync(server.dir).sort(), before);
    assert.deepEqual(await storedDatabases(server), stored);
  });

  test('records are isolated per database: a record in a is invisible from b', async () => {
    for (const name of ['iso_a', 'iso_b']) assert.equal((await server.admin('POST', '/api/databases', { body: { name } })).status, 200);
    for (const db of ['iso_a', 'iso_b']) await createCollection(server, { name: 'notes', fields: [{ name: 'text', type: 'text' }] }, db);
    const created = await server.admin('POST', '/api/collections/notes/records', { db: 'iso_a', body: { text: 'only in a' } });
    assert.equal(created.status, 200);

    const fromB = await server.admin('GET', `/api/collections/notes/records/${created.body.id}`, { db: 'iso_b' });
    assert.equal(fromB.status, 404);
    const listB = await server.admin('GET', '/api/collections/notes/records', { db: 'iso_b' });
    assert.equal(listB.body.totalItems, 0);
    const listMain = await server.admin('GET', '/api/collections/notes/records');
    assert.equal(listMain.status, 404, 'main has no notes collection');

    const fromA = await server.admin('GET', `/api/collections/notes/records/${created.body.id}`, { db: 'iso_a' });
    assert.equal(fromA.status, 200);
    assert.equal(fromA.body.text, 'only in a');
  });

  test('collections are per database too', async () => {
    await createCollection(server, { name: 'only_in_shop' }, 'shop');
    assert.equal((await server.admin('GET', '/api/collections/only_in_shop', { db: 'shop' })).status, 200);
    assert.equal((await server.admin('GET', '/api/collections/only_in_shop')).status, 404);
  });

  test('databases survive a restart', async () => {
    const restarted = await startServer({ dir: server.dir });
    try {
      const list = await restarted.admin('GET', '/api/databases');
      assert.ok(list.body.some((d: any) => d.name === 'shop'));
      assert.equal((await restarted.admin('GET', '/api/collections/only_in_shop', { db: 'shop' })).status, 200);
    } finally {
      await restarted.close();
    }
  });
});
