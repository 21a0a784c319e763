import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Database } from '../../src/storage/index.ts';
import { relationExists } from '../helpers/inspect.ts';
import { callOp, migrationServer } from '../helpers/pb-migrations.ts';
import type { TestServer } from '../helpers/server.ts';

/**
 * What real apps' pb_migrations folders do that PocketBase accepts and Cairn used to refuse (the
 * corpus of docs/pocketbase.md, "Checked by"), each in a file of our own: snapshots whose rules and
 * views name what comes later in the list, `_superusers` and `users` changed by a file, SQLite's view
 * SQL on PostgreSQL, `True` in a rule, a v0.22 snapshot without the default `name` of `users`.
 */

let server: TestServer;
let db: Database;
const { inMigration } = migrationServer((s, d) => {
  server = s;
  db = d;
});
const call = callOp;

describe('what the corpus of real folders needed', () => {
  test('a snapshot: a view reads a relation column whose target comes later, an auth rule names a relation of users added by the same snapshot', async () => {
    await inMigration(async (host) => {
      const users = await call(host, 'collection', 'users');
      await call(host, 'importCollections', [
        { ...users, fields: [...users.fields, { id: 'rel_homes', name: 'homes', type: 'relation', collectionId: 'pbc_homes', maxSelect: 9 }], listRule: 'id = @request.auth.id || homes.id ?= @request.auth.homes.id' },
        { id: 'pbc_shelf_view', name: 'tagged_shelves', type: 'view', viewQuery: 'SELECT id, label, tags FROM shelves2' },
        { id: 'pbc_shelves2', name: 'shelves2', type: 'base', fields: [{ id: 't_label', name: 'label', type: 'text' }, { id: 'r_tags', name: 'tags', type: 'relation', collectionId: 'pbc_tags', maxSelect: 99 }] },
        { id: 'pbc_tags', name: 'tags', type: 'base', fields: [{ id: 't_tag', name: 'tag', type: 'text' }], listRule: 'id ?= @request.auth.homes.id' },
        { id: 'pbc_homes', name: 'homes', type: 'base', fields: [{ id: 't_home', name: 'title', type: 'text' }], viewRule: 'id = @request.auth.homes.id' },
      ], false);
    });
    const set = await server.services.collections.all(db);
    assert.deepEqual(set.find('tagged_shelves')!.fields.map((f) => f.name).filter((n) => ['label', 'tags'].includes(n)), ['label', 'tags']);
    assert.equal(set.find('users')!.listRule, 'id = @request.auth.id || homes.id ?= @request.auth.homes.id');
    assert.equal(set.find('homes')!.viewRule, 'id = @request.auth.homes.id');
  });

  test('two fields swap their names in one save: each column keeps its values under the other name', async () => {
    await inMigration(async (host) => {
      await call(host, 'saveCollection', { id: 'pbc_people', name: 'people', type: 'base', fields: [{ id: 'text_a', name: 'first', type: 'text' }, { id: 'text_b', name: 'last', type: 'text' }] }, false);
      await call(host, 'create', 'people', { first: 'Ada', last: 'Lovelace' });
    });
    await inMigration(async (host) => {
      const people = await call(host, 'collection', 'pbc_people');
      const own = people.fields.filter((f: any) => f.id === 'text_a' || f.id === 'text_b');
      own.find((f: any) => f.id === 'text_a').name = 'last';
      own.find((f: any) => f.id === 'text_b').name = 'first';
      await call(host, 'saveCollection', people, true);
    });
    const rows = await db.all<{ first: string; last: string }>('SELECT first, last FROM people');
    assert.deepEqual(rows.map((r) => ({ ...r })), [{ first: 'Lovelace', last: 'Ada' }]);
  });

  test('a snapshot lists users under another id: relations of the list naming that id reach the users there are', async () => {
    await inMigration(async (host) => {
      const users = await call(host, 'collection', 'users');
      await call(host, 'importCollections', [
        { ...users, id: 'systemprofiles0' },
        { id: 'pbc_keys', name: 'ssh_keys', type: 'base', fields: [{ id: 'r_owner', name: 'owner', type: 'relation', collectionId: 'systemprofiles0', maxSelect: 1 }] },
      ], false);
    });
    const keys = (await server.services.collections.all(db)).find('ssh_keys')!;
    assert.equal(keys.fields.find((f) => f.name === 'owner')!.options.toCollection, 'users');
  });

  test('a column a view reads is renamed: the view follows (SQLite checks Cairn\'s wrapper around the view\'s query too)', async () => {
    await inMigration(async (host) => {
      await call(host, 'saveCollection', { id: 'pbc_providers', name: 'providers', type: 'base', fields: [{ id: 'text_pic', name: 'public_picture', type: 'text' }, { id: 'text_pn', name: 'public_name', type: 'text' }] }, false);
      await call(host, 'create', 'providers', { public_picture: 'p.png', public_name: 'Ada' });
      // A computed id: Cairn wraps the query to read it as text, naming the columns.
      await call(host, 'saveCollection', { id: 'pbc_public', name: 'public_providers', type: 'view', viewQuery: "SELECT (p.id || '_x') AS id, p.public_name AS name, p.public_picture FROM providers p" }, false);
    });
    await inMigration(async (host) => {
      const providers = await call(host, 'collection', 'pbc_providers');
      for (const f of providers.fields) if (f.id === 'text_pic') f.name = 'publicPicture';
      for (const f of providers.fields) if (f.id === 'text_pn') f.name = 'publicName';
      await call(host, 'saveCollection', providers, true);
    });
    const rows = await db.all<Record<string, unknown>>('SELECT * FROM public_providers');
    assert.equal(rows.length, 1);
    assert.equal(rows[0].name, 'Ada');
    assert.ok(Object.values(rows[0]).includes('p.png'));
  });

  test('a file that adds a field to _superusers saves nothing and does not fail', async () => {
    const saved = await inMigration(async (host) => {
      const su = await call(host, 'collection', 'pbc_3142635823');
      su.fields.push({ id: 'file376926767', name: 'avatar', type: 'file', maxSelect: 1 });
      return call(host, 'saveCollection', su, true);
    });
    assert.equal(saved.name, '_superusers');
    assert.equal(saved.fields.some((f: any) => f.name === 'avatar'), false);
  });

  test('`True`, `FALSE` and `Null` in a rule are the literals, in any letter case', async () => {
    const made = await inMigration((host) =>
      call(host, 'saveCollection', { name: 'cased_rules', type: 'base', fields: [{ name: 'open', type: 'bool' }], listRule: 'open = True', viewRule: 'open != FALSE && id != Null' }, false),
    );
    assert.equal(made.listRule, 'open = True');
  });

  test('@request.body.<key> that names no field is the body as sent, a path below it included', async () => {
    const made = await inMigration((host) =>
      call(host, 'saveCollection', { name: 'films', type: 'base', fields: [{ name: 'title', type: 'text' }], createRule: '@request.body.user.id = @request.auth.id && @request.body.note != "x"' }, false),
    );
    assert.equal(made.createRule, '@request.body.user.id = @request.auth.id && @request.body.note != "x"');
  });

  test('a view written in SQLite\'s dialect: backtick names, ==, mixed-case columns, strftime, julianday, json_extract', async () => {
    const made = await inMigration(async (host) => {
      await call(host, 'saveCollection', { name: 'Sales', type: 'base', fields: [{ name: 'soldAt', type: 'text' }, { name: 'meta', type: 'json' }, { name: 'isPaid', type: 'bool' }] }, false);
      await call(host, 'create', 'Sales', { soldAt: '2026-03-04 10:00:00.000Z', meta: { shop: { city: 'Oslo' } }, isPaid: true });
      return call(host, 'saveCollection', {
        name: 'paid_sales',
        type: 'view',
        viewQuery:
          "SELECT id, strftime('%Y-%m', soldAt) AS month, ROUND(julianday(soldAt) - julianday('2026-03-01'), 2) AS days, json_extract(meta, '$.shop.city') AS city FROM `Sales` WHERE isPaid == TRUE",
      }, false);
    });
    assert.deepEqual(made.fields.map((f: any) => f.name).filter((n: string) => ['month', 'days', 'city'].includes(n)), ['month', 'days', 'city']);
    const rows = await server.services.collections.all(db).then(() => db.all<any>('SELECT month, days, city FROM paid_sales'));
    assert.equal(rows.length, 1);
    assert.equal(rows[0].month, '2026-03');
    assert.equal(Number(rows[0].days), 3.42);
    assert.equal(rows[0].city, 'Oslo');
  });

  test('a double-quoted word that names no column is a string in a view, as PocketBase\'s SQLite reads it', async () => {
    await inMigration((host) => call(host, 'saveCollection', { name: 'greetings', type: 'view', viewQuery: 'SELECT id, "<p>Hello there</p>" AS greeting, "soldAt" FROM Sales' }, false));
    const rows = await db.all<{ greeting: string }>('SELECT greeting FROM greetings');
    assert.equal(rows[0].greeting, '<p>Hello there</p>');
  });

  test('a view another view reads gets a new query; the other view stays (PostgreSQL refuses to drop it under it)', async () => {
    await inMigration(async (host) => {
      await call(host, 'saveCollection', { id: 'pbc_inner', name: 'inner_view', type: 'view', viewQuery: "SELECT id, soldAt FROM Sales" }, false);
      await call(host, 'saveCollection', { id: 'pbc_outer', name: 'outer_view', type: 'view', viewQuery: 'SELECT id, soldAt FROM inner_view' }, false);
    });
    await inMigration(async (host) => {
      const inner = await call(host, 'collection', 'pbc_inner');
      await call(host, 'saveCollection', { ...inner, viewQuery: "SELECT id, soldAt, 'x' AS extra FROM Sales" }, true);
    });
    assert.equal((await db.all('SELECT id FROM outer_view')).length, 1);
    assert.equal((await db.all('SELECT extra FROM inner_view')).length, 1);
  });

  test('v0.22 snapshot of users without the default name field: the OAuth2 mapping to it is emptied', async () => {
    await inMigration(async (host) => {
      const users = await call(host, 'collection', 'users');
      await call(host, 'importCollections', [{ id: users.id, name: 'users', type: 'auth', system: false, schema: [{ id: 'x_nick', name: 'nick', type: 'text', options: {} }], listRule: null, options: { allowEmailAuth: true } }], false);
    });
    const users = (await server.services.collections.all(db)).find('users')!;
    assert.equal(users.fields.some((f) => f.name === 'name'), false);
    assert.ok(users.fields.some((f) => f.name === 'nick'));
  });

  test('a file deletes the default users collection (PocketBase lets it), and a later one makes it again', async () => {
    await inMigration(async (host) => {
      // A collection related to users goes first, as PocketBase also refuses to delete a referenced one.
      await call(host, 'deleteCollection', 'ssh_keys');
      const users = await call(host, 'collection', 'users');
      await call(host, 'saveCollection', { ...users, fields: users.fields.filter((f: any) => f.type !== 'relation') }, true);
      await call(host, 'deleteCollection', users.id);
    });
    assert.equal((await server.services.collections.all(db)).find('users'), undefined);
    assert.equal(await relationExists(db, 'users'), false);
    await inMigration((host) => call(host, 'saveCollection', { id: '_pb_users_auth_', name: 'users', type: 'auth', fields: [{ name: 'nickname', type: 'text' }] }, false));
    assert.equal((await server.services.collections.all(db)).find('users')!.id, '_pb_users_auth_');
  });
});
