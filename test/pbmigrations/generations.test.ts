import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Database } from '../../src/storage/index.ts';
import { columnsOf, databaseOf } from '../helpers/inspect.ts';
import { migrationsDir } from '../helpers/pb-migrations.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * Files as the corpus of real folders writes them (docs/pocketbase.md, "Checked by"), through the
 * real runtime: a v0.22 file naming the default `users` fields by v0.22's ids, and a ≥ 0.23 file
 * giving `setPassword` a number.
 */

const FILES = {
  '1690000001_updated_users.js': `migrate((db) => {
  const dao = new Dao(db)
  const collection = dao.findCollectionByNameOrId("_pb_users_auth_")
  // v0.22's id of the default "name" field: renamed, as PocketBase v0.22's admin UI writes it.
  collection.schema.addField(new SchemaField({ "id": "users_name", "name": "first_name", "type": "text", "options": {} }))
  collection.schema.removeField("users_avatar")
  return dao.saveCollection(collection)
})
`,
  '1700000002_seed.js': `migrate((app) => {
  const user = new Record(app.findCollectionByNameOrId("users"), { email: "numbers@example.com" })
  user.setPassword(1234567890)
  app.save(user)
})
`,
};

let server: TestServer;
let db: Database;
let folder: ReturnType<typeof migrationsDir>;

before(async () => {
  folder = migrationsDir(FILES);
  server = await startServer({ env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir } });
  db = await databaseOf(server);
});
after(async () => {
  await server?.close();
  folder?.remove();
});

test('v0.22 ids of the default users fields name the fields there are: name renamed, avatar removed', async () => {
  const users = (await server.services.collections.all(db)).find('users')!;
  const names = users.fields.map((f) => f.name);
  assert.ok(names.includes('first_name'), names.join());
  assert.equal(names.includes('name'), false);
  assert.equal(names.includes('avatar'), false);
  const columns = await columnsOf(db, 'users');
  assert.ok(columns.includes('first_name'));
  assert.equal(columns.includes('name'), false);
});

test('setPassword(1234567890) sets the password "1234567890"', async () => {
  const res = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'numbers@example.com', password: '1234567890' } });
  assert.equal(res.status, 200, res.text);
});
