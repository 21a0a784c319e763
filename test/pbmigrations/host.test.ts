import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { HookServices } from '../../src/hooks/facade.ts';
import { migrationHost, type MigrationHost } from '../../src/pbmigrations/host.ts';
import type { Database, Transaction } from '../../src/storage/index.ts';
import { columnsOf, databaseOf, relationExists } from '../helpers/inspect.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * The host side of a pb_migrations file (src/pbmigrations/host.ts, src/collections/transaction.ts):
 * what `$app`/`Dao` reach, every read and write in the file's transaction, with PocketBase's save
 * semantics (ids kept, renames, replaced fields, dropped tables) on both engines.
 */

let server: TestServer;
let db: Database;

before(async () => {
  server = await startServer();
  db = await databaseOf(server);
});
after(async () => {
  await server?.close();
});

const services = () => server.services as unknown as HookServices;

/** Runs `fn` with a migration host in a transaction of `main`; `fail` rolls it back by throwing after `fn`. */
async function inMigration<T>(fn: (host: MigrationHost, tx: Transaction) => Promise<T>, fail = false): Promise<T> {
  let out!: T;
  try {
    await db.transaction(async (tx) => {
      const host = await migrationHost(services(), { db: 'main', tx });
      try {
        out = await fn(host, tx);
        await host.finish();
      } finally {
        host.close();
      }
      if (fail) throw new Error('the file failed');
    });
  } catch (err) {
    if (!fail || (err as Error).message !== 'the file failed') throw err;
  } finally {
    await server.services.collections.invalidate(db);
  }
  return out;
}

/** A collection's own fields in its JSON (PocketBase lists `id`, `created`, `updated` among them). */
const own = (fields: any[]) => fields.filter((f) => !['id', 'created', 'updated'].includes(f.name));

const call = (host: MigrationHost, op: string, ...args: unknown[]) => host.ops(op, args) as Promise<any>;

const BOOKS = {
  id: 'pbc_2855883128',
  name: 'books',
  type: 'base',
  fields: [
    { id: 'text1', name: 'title', type: 'text', required: true, max: 200 },
    { id: 'number1', name: 'pages', type: 'number' },
    // PocketBase's id of the default users collection, as v0.22 and ≥ 0.23 apps name it.
    { id: 'relation1', name: 'owner', type: 'relation', collectionId: '_pb_users_auth_', maxSelect: 1 },
  ],
  listRule: '',
  indexes: ['CREATE INDEX idx_books_title ON books (title)'],
};

describe('a migration\'s collections and records, in its transaction', () => {
  test('a new collection keeps PocketBase\'s id, is readable and writable inside the transaction, and commits with it', async () => {
    await inMigration(async (host) => {
      const made = await call(host, 'saveCollection', BOOKS, false);
      assert.equal(made.id, 'pbc_2855883128');
      assert.deepEqual(own(made.fields).map((f: any) => f.name), ['title', 'pages', 'owner']);
      // Found again by id (later files name it so), with its rules and indexes.
      const found = await call(host, 'collection', 'pbc_2855883128');
      assert.equal(found.name, 'books');
      assert.equal(found.listRule, '');
      // Records go through the records domain, inside the transaction (validation included).
      const rec = await call(host, 'create', 'books', { title: 'Dune', pages: 412 });
      assert.equal(rec.title, 'Dune');
      await assert.rejects(call(host, 'create', 'books', { pages: 1 }), (err: any) => err.status === 400 && 'title' in err.data);
      assert.equal((await call(host, 'find', 'books', { filter: 'pages > 400' })).length, 1);
      assert.deepEqual(await call(host, 'sql', 'SELECT title FROM books WHERE pages = {:p}', { p: 412 }, 'all'), [{ title: 'Dune' }]);
      // Outside the transaction, nothing yet (SQLite: the one writer is this transaction; PostgreSQL: another connection).
      assert.equal(server.services.collections.peekAll(db)?.find('books'), undefined);
    });
    const set = await server.services.collections.all(db);
    assert.equal(set.find('books')?.id, 'pbc_2855883128');
    const owner = set.find('books')!.fields.find((f) => f.name === 'owner')!;
    assert.equal(owner.options.toCollection, 'users');
    assert.equal((await db.all('SELECT title FROM books')).length, 1);
    const listed = await server.request('GET', '/api/collections/books/records');
    assert.equal(listed.status, 200);
    assert.equal(listed.body.items[0].title, 'Dune');
  });

  test('a file that fails leaves no collection, table, record or setting of its own', async () => {
    const before = (await server.services.settings.view()) as any;
    await inMigration(async (host) => {
      await call(host, 'saveCollection', { name: 'drafts', type: 'base', fields: [{ name: 'body', type: 'text' }] }, false);
      await call(host, 'create', 'drafts', { body: 'x' });
      await call(host, 'create', 'books', { title: 'Emma' });
      const settings = await call(host, 'settings');
      settings.meta.appName = 'Renamed by a failed file';
      await call(host, 'saveSettings', settings);
    }, true);
    assert.equal((await server.services.collections.all(db)).find('drafts'), undefined);
    assert.equal(await relationExists(db, 'drafts'), false);
    assert.deepEqual(await db.all("SELECT id FROM books WHERE title = 'Emma'"), []);
    assert.equal(((await server.services.settings.view()) as any).meta.appName, before.meta.appName);
  });

  test('settings a file saves are written once it ran to its end', async () => {
    await inMigration(async (host) => {
      const settings = await call(host, 'settings');
      settings.meta.appName = 'Library';
      await call(host, 'saveSettings', settings);
    });
    assert.equal(((await server.services.settings.view()) as any).meta.appName, 'Library');
  });

  test('PocketBase\'s save: a field renamed keeps its column and data, a removed one leaves the schema, a type change replaces the field', async () => {
    await inMigration(async (host) => {
      const books = await call(host, 'collection', 'books');
      const fields = books.fields
        .filter((f: any) => f.name !== 'owner')
        .map((f: any) => (f.name === 'title' ? { ...f, name: 'heading' } : f.name === 'pages' ? { ...f, type: 'text' } : f));
      const saved = await call(host, 'saveCollection', { ...books, fields }, true);
      assert.deepEqual(own(saved.fields).map((f: any) => `${f.name}:${f.type}`), ['heading:text', 'pages:text']);
    });
    const books = (await server.services.collections.all(db)).find('books')!;
    assert.deepEqual(books.fields.map((f) => f.name), ['heading', 'pages']);
    assert.deepEqual(await db.all('SELECT heading FROM books'), [{ heading: 'Dune' }]);
    assert.ok(!(await columnsOf(db, 'books')).includes('title'));
    // The index on the renamed column followed it.
    const made = await server.admin('POST', '/api/collections/books/records', { body: { heading: 'Emma', pages: 'twelve' } });
    assert.equal(made.status, 200, made.text);
  });

  test('a collection renamed moves its table and the relations naming it; a deleted one drops its table', async () => {
    await inMigration(async (host) => {
      await call(host, 'saveCollection', { name: 'loans', type: 'base', fields: [{ id: 'rel2', name: 'book', type: 'relation', collectionId: 'pbc_2855883128', maxSelect: 1 }] }, false);
      const books = await call(host, 'collection', 'pbc_2855883128');
      await call(host, 'saveCollection', { ...books, name: 'volumes' }, true);
      assert.equal((await call(host, 'find', 'volumes', {})).length, 2);
    });
    assert.equal(await relationExists(db, 'books'), false);
    assert.equal(await relationExists(db, 'volumes'), true);
    assert.equal((await server.services.collections.all(db)).find('loans')!.fields[0].options.toCollection, 'volumes');
    await inMigration(async (host) => {
      // As on PocketBase, a collection others relate to is not deleted.
      await assert.rejects(call(host, 'deleteCollection', 'volumes'), /referenced/);
      await call(host, 'deleteCollection', 'loans');
    });
    assert.equal(await relationExists(db, 'loans'), false);
    assert.equal((await server.services.collections.all(db)).find('loans'), undefined);
  });

  test('importCollections: relations to collections later in the list, views last, deleteMissing removes the others', async () => {
    await inMigration(async (host) => {
      await call(
        host,
        'importCollections',
        [
          { id: 'pbc_100', name: 'views_of_shelves', type: 'view', viewQuery: 'SELECT id, label FROM shelves' },
          { id: 'pbc_101', name: 'items', type: 'base', fields: [{ id: 'r1', name: 'shelf', type: 'relation', collectionId: 'pbc_102', maxSelect: 1 }] },
          { id: 'pbc_102', name: 'shelves', type: 'base', fields: [{ id: 't1', name: 'label', type: 'text' }, { id: 'r2', name: 'items', type: 'relation', collectionId: 'pbc_101', maxSelect: 5 }] },
          // PocketBase's own collections in a snapshot are left as they are.
          { id: 'pbc_3142635823', name: '_superusers', type: 'auth', fields: [] },
        ],
        true,
      );
    });
    const set = await server.services.collections.all(db);
    assert.deepEqual(
      set.list.filter((c) => !c.name.startsWith('_') && c.name !== 'users').map((c) => c.name).sort(),
      ['items', 'shelves', 'views_of_shelves'],
    );
    assert.equal(set.find('items')!.fields[0].options.toCollection, 'shelves');
    assert.equal(set.find('shelves')!.fields[1].options.toCollection, 'items');
    assert.equal(set.find('volumes'), undefined);
    assert.equal(await relationExists(db, 'volumes'), false);
    // `users` is a system collection of Cairn's: deleteMissing leaves it.
    assert.ok(set.find('users'));
  });
});
