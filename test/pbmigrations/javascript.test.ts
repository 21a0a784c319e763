import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Collection } from '../../src/collections/model.ts';
import { PbMigrationError } from '../../src/pbmigrations/errors.ts';
import { PbMigrationRunner } from '../../src/pbmigrations/runner.ts';
import { pbMigrationRuntime } from '../../src/pbmigrations/runtime.ts';
import type { HookServices } from '../../src/hooks/facade.ts';
import { databaseOf, relationExists } from '../helpers/inspect.ts';
import { migrationsDir } from '../helpers/pb-migrations.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * pb_migrations files run by Cairn's JavaScript runtime (the pb_hooks runtime's modules): each
 * migration API of both generations, as our own files use them, applied at start; `down`; a file
 * that fails, rolled back and named with its line.
 */

// ≥ 0.23: a collection made with field constructors, then changed, seeded, and settings saved.
const V23 = {
  '1710000001_created_authors.js': `/// <reference path="../pb_data/types.d.ts" />
migrate((app) => {
  const authors = new Collection({
    id: "pbc_1000000001",
    type: "base",
    name: "authors",
    listRule: "",
    viewRule: "",
    fields: [
      new TextField({ name: "name", required: true, max: 120 }),
      new EmailField({ name: "contact" }),
      new AutodateField({ name: "created", onCreate: true }),
      new AutodateField({ name: "updated", onCreate: true, onUpdate: true }),
    ],
    indexes: ["CREATE UNIQUE INDEX idx_authors_name ON authors (name)"],
  });
  app.save(authors);
}, (app) => {
  app.delete(app.findCollectionByNameOrId("authors"));
});
`,
  '1710000002_created_posts.js': `migrate((app) => {
  const authors = app.findCollectionByNameOrId("pbc_1000000001");
  const posts = new Collection({ type: "base", name: "posts", id: "pbc_1000000002" });
  posts.fields.add(new TextField({ name: "title", required: true }));
  posts.fields.add(new NumberField({ name: "score", onlyInt: true }));
  posts.fields.add(new BoolField({ name: "published" }));
  posts.fields.add(new SelectField({ name: "tags", values: ["a", "b", "c"], maxSelect: 2 }));
  posts.fields.add(new RelationField({ name: "author", collectionId: authors.id, maxSelect: 1, cascadeDelete: true }));
  posts.fields.add(new JSONField({ name: "meta" }));
  posts.fields.add(new DateField({ name: "due" }));
  posts.fields.add(new URLField({ name: "link" }));
  posts.fields.add(new EditorField({ name: "body" }));
  posts.fields.add(new FileField({ name: "cover", maxSelect: 1 }));
  app.save(posts);
}, (app) => {
  app.delete(app.findCollectionByNameOrId("posts"));
});
`,
  '1710000003_updated_posts.js': `migrate((app) => {
  const posts = app.findCollectionByNameOrId("pbc_1000000002");
  // The admin UI's forms: unmarshal, addAt with new Field, removeById, a rename.
  unmarshal({ listRule: "published = true", viewRule: "" }, posts);
  posts.fields.addAt(1, new Field({ id: "text_subtitle", name: "subtitle", type: "text", max: 300 }));
  posts.fields.removeById(posts.fields.getByName("link").id);
  posts.fields.getByName("body").name = "content";
  app.save(posts);
}, (app) => {
  const posts = app.findCollectionByNameOrId("pbc_1000000002");
  posts.fields.removeById("text_subtitle");
  posts.fields.getByName("content").name = "body";
  posts.fields.add(new URLField({ name: "link" }));
  app.save(posts);
});
`,
  '1710000004_seed.js': `migrate((app) => {
  const authors = app.findCollectionByNameOrId("authors");
  const ada = new Record(authors, { name: "Ada" });
  app.save(ada);
  const posts = app.findCollectionByNameOrId("posts");
  const post = new Record(posts);
  post.set("title", "First");
  post.set("author", ada.id);
  post.set("published", true);
  app.save(post);
  app.db().newQuery("UPDATE posts SET score = {:score} WHERE title = {:title}").bind({ score: 7, title: "First" }).execute();
  const found = app.findFirstRecordByFilter("posts", "title = {:t}", { t: "First" });
  if (found.getInt("score") !== 7) throw new Error("raw SQL and records disagree: " + found.getInt("score"));
  const settings = app.settings();
  settings.meta.appName = "Migrated app";
  app.save(settings);
}, (app) => {
  app.db().newQuery("DELETE FROM posts").execute();
  app.db().newQuery("DELETE FROM authors").execute();
});
`,
};

// v0.22: new Collection with a schema, Dao, SchemaField, importCollections, raw SQL, records.
const V22 = {
  '1690000001_created_notes.js': `migrate((db) => {
  const collection = new Collection({
    "id": "n0tes0000000001",
    "name": "notes",
    "type": "base",
    "system": false,
    "schema": [
      { "system": false, "id": "nt_title", "name": "title", "type": "text", "required": true, "unique": false, "options": { "min": null, "max": 200, "pattern": "" } },
      { "system": false, "id": "nt_owner", "name": "owner", "type": "relation", "required": false, "unique": false, "options": { "collectionId": "_pb_users_auth_", "cascadeDelete": false, "minSelect": null, "maxSelect": 1, "displayFields": [] } }
    ],
    "indexes": [],
    "listRule": "",
    "viewRule": null,
    "createRule": null,
    "updateRule": null,
    "deleteRule": null,
    "options": {}
  });
  return Dao(db).saveCollection(collection);
}, (db) => {
  const dao = new Dao(db);
  return dao.deleteCollection(dao.findCollectionByNameOrId("n0tes0000000001"));
});
`,
  '1690000002_updated_notes.js': `migrate((db) => {
  const dao = new Dao(db)
  const collection = dao.findCollectionByNameOrId("n0tes0000000001")
  // add
  collection.schema.addField(new SchemaField({ "system": false, "id": "nt_pages", "name": "pages", "type": "number", "required": false, "unique": false, "options": { "min": null, "max": null, "noDecimal": true } }))
  // update (a rename, by id)
  collection.schema.addField(new SchemaField({ "system": false, "id": "nt_title", "name": "heading", "type": "text", "required": true, "unique": false, "options": { "min": null, "max": 200, "pattern": "" } }))
  collection.listRule = null
  return dao.saveCollection(collection)
}, (db) => {
  const dao = new Dao(db)
  const collection = dao.findCollectionByNameOrId("n0tes0000000001")
  collection.schema.removeField("nt_pages")
  collection.schema.addField(new SchemaField({ "system": false, "id": "nt_title", "name": "title", "type": "text", "required": true, "unique": false, "options": { "min": null, "max": 200, "pattern": "" } }))
  collection.listRule = ""
  return dao.saveCollection(collection)
})
`,
  '1690000003_collections_snapshot.js': `migrate((db) => {
  const snapshot = [
    { "id": "t4gs000000000001", "name": "tags", "type": "base", "system": false, "schema": [
      { "system": false, "id": "tg_label", "name": "label", "type": "text", "required": true, "unique": false, "options": {} }
    ], "indexes": [], "listRule": "", "viewRule": "", "createRule": null, "updateRule": null, "deleteRule": null, "options": {} },
    { "id": "n0tes0000000001", "name": "notes", "type": "base", "system": false, "schema": [
      { "system": false, "id": "nt_title", "name": "heading", "type": "text", "required": true, "unique": false, "options": {} },
      { "system": false, "id": "nt_pages", "name": "pages", "type": "number", "required": false, "unique": false, "options": {} },
      { "system": false, "id": "nt_tags", "name": "tags", "type": "relation", "required": false, "unique": false, "options": { "collectionId": "t4gs000000000001", "maxSelect": null } }
    ], "indexes": [], "listRule": null, "viewRule": null, "createRule": null, "updateRule": null, "deleteRule": null, "options": {} }
  ];
  const collections = snapshot.map((item) => new Collection(item));
  return Dao(db).importCollections(collections, false, null);
}, (db) => {
  return null;
})
`,
  '1690000004_seed.js': `migrate((db) => {
  const dao = new Dao(db);
  db.newQuery("INSERT INTO tags (id, label, created, updated) VALUES ('tag000000000001', 'red', '', '')").execute();
  const notes = dao.findCollectionByNameOrId("notes");
  const record = new Record(notes, { heading: "Hello", pages: 3, tags: ["tag000000000001"] });
  dao.saveRecord(record);
  const found = dao.findFirstRecordByFilter("notes", "heading = 'Hello'");
  if (found.getInt("pages") !== 3) throw new Error("seeded record not found");
  const settings = dao.findSettings();
  settings.meta.appName = "Migrated v0.22 app";
  dao.saveSettings(settings);
}, (db) => {
  db.newQuery("DELETE FROM notes").execute();
})
`,
};

function fieldNames(c: Collection | undefined): string[] {
  return (c?.fields ?? []).map((f) => f.name);
}

async function history(server: TestServer): Promise<string[]> {
  const rows = await (await databaseOf(server)).all<{ file: string }>('SELECT file FROM _migrations ORDER BY file');
  return rows.map((r) => r.file);
}

/** A server started on a folder of `files` for the describe block it is called in, both removed after it. */
function servedFolder(files: Record<string, string>): { folder: ReturnType<typeof migrationsDir>; server: TestServer } {
  const served = {} as { folder: ReturnType<typeof migrationsDir>; server: TestServer };
  before(async () => {
    served.folder = migrationsDir(files);
    served.server = await startServer({ env: { CAIRN_PB_MIGRATIONS_DIR: served.folder.dir } });
  });
  after(async () => {
    await served.server?.close();
    served.folder?.remove();
  });
  return served;
}

/** What a start on `dir` with the pb_migrations folder `migrations` fails with; undefined if it starts. */
async function startError(dir: string, migrations: string): Promise<unknown> {
  return startServer({ dir, env: { CAIRN_PB_MIGRATIONS_DIR: migrations } }).then(
    async (s) => {
      await s.close();
      return undefined;
    },
    (e: unknown) => e,
  );
}

describe('≥ 0.23 pb_migrations files', () => {
  const served = servedFolder(V23);

  test('create collections with field constructors, keep their ids, change them as the admin UI\'s files do', async () => {
    const set = await served.server.services.collections.all(await databaseOf(served.server));
    const authors = set.find('pbc_1000000001');
    assert.equal(authors?.name, 'authors');
    assert.deepEqual(fieldNames(authors), ['name', 'contact']);
    assert.deepEqual(authors!.indexes.length, 1);
    const posts = set.find('posts')!;
    assert.equal(posts.id, 'pbc_1000000002');
    // addAt counts PocketBase's `id` field, first in the list: position 1 is before `title`.
    assert.deepEqual(fieldNames(posts), ['subtitle', 'title', 'score', 'published', 'tags', 'author', 'meta', 'due', 'content', 'cover']);
    assert.equal(posts.listRule, 'published = true');
    assert.equal(posts.fields.find((f) => f.name === 'author')!.options.toCollection, 'authors');
    assert.deepEqual(await history(served.server), Object.keys(V23));
  });

  test('records, raw SQL and settings saved by a file are there', async () => {
    const listed = await served.server.request('GET', '/api/collections/posts/records?expand=author');
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.body.items.length, 1);
    assert.equal(listed.body.items[0].score, 7);
    assert.equal(listed.body.items[0].expand.author.name, 'Ada');
    assert.equal(((await served.server.services.settings.view()) as any).meta.appName, 'Migrated app');
  });

  test('down runs the second functions, newest first; up applies them again', async () => {
    const runner = new PbMigrationRunner({
      dir: served.folder.dir,
      registry: served.server.services.registry,
      collections: served.server.services.collections,
      execute: pbMigrationRuntime(served.server.services as unknown as HookServices),
    });
    const reverted = await runner.down(2, ['main']);
    assert.deepEqual(reverted.map((s) => s.file), ['1710000004_seed.js', '1710000003_updated_posts.js']);
    const db = await databaseOf(served.server);
    const posts = (await served.server.services.collections.all(db)).find('posts')!;
    assert.ok(fieldNames(posts).includes('body') && !fieldNames(posts).includes('subtitle'));
    assert.deepEqual(await db.all('SELECT id FROM posts'), []);
    assert.deepEqual((await runner.up()).map((s) => s.file), ['1710000003_updated_posts.js', '1710000004_seed.js']);
    assert.deepEqual(fieldNames((await served.server.services.collections.all(db)).find('posts')).slice(0, 2), ['subtitle', 'title']);
  });
});

describe('v0.22 pb_migrations files', () => {
  const served = servedFolder(V22);

  test('new Collection with a schema, Dao, SchemaField (add and rename by id), importCollections', async () => {
    const set = await served.server.services.collections.all(await databaseOf(served.server));
    const notes = set.find('n0tes0000000001')!;
    assert.equal(notes.name, 'notes');
    assert.deepEqual(fieldNames(notes), ['heading', 'pages', 'tags']);
    assert.equal(notes.listRule, null);
    // The relation to PocketBase's users id was dropped by the snapshot (it lists the fields in full).
    assert.ok(set.find('tags'));
    assert.equal(notes.fields.find((f) => f.name === 'tags')!.options.toCollection, 'tags');
    assert.deepEqual(await history(served.server), Object.keys(V22));
  });

  test('records saved through the Dao and raw SQL through db are there; settings through saveSettings', async () => {
    const rows = await (await databaseOf(served.server)).all<{ heading: string; pages: number }>('SELECT heading, pages FROM notes');
    assert.deepEqual(rows.map((r) => [r.heading, Number(r.pages)]), [['Hello', 3]]);
    assert.equal(((await served.server.services.settings.view()) as any).meta.appName, 'Migrated v0.22 app');
  });
});

describe('a pb_migrations file that throws or whose save is refused', () => {
  test('stops the start with the file and line; the files before it stay, nothing of it is kept', async () => {
    const folder = migrationsDir({
      '1720000001_created_shelves.js': 'migrate((app) => { app.save(new Collection({ name: "shelves", fields: [new TextField({ name: "label" })] })) })\n',
      '1720000002_broken.js': [
        'migrate((app) => {',
        '  app.save(new Collection({ name: "drawers", fields: [new TextField({ name: "label" })] }))',
        '  const label = "taken"',
        '  // A second collection named as the first: refused, as on PocketBase.',
        '  app.save(new Collection({ name: "shelves", fields: [new TextField({ name: label })] }))',
        '})',
        '',
      ].join('\n'),
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-pbmig-js-fail-'));
    try {
      const err = await startError(dir, folder.dir);
      assert.ok(err instanceof PbMigrationError, String(err));
      assert.equal(err.place.file, '1720000002_broken.js');
      assert.equal(err.place.line, 5, err.message);
      assert.match(err.message, /1720000002_broken\.js:5:\d+: /);
      // Nothing of the failed file: not its collection, not its history row.
      const server = await startServer({ dir, env: { CAIRN_PB_MIGRATIONS_DIR: 'off' } });
      try {
        const db = await databaseOf(server);
        const set = await server.services.collections.all(db);
        assert.ok(set.find('shelves'));
        assert.equal(set.find('drawers'), undefined);
        assert.equal(await relationExists(db, 'drawers'), false);
        assert.deepEqual(await history(server), ['1720000001_created_shelves.js']);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseFor(dir);
      folder.remove();
    }
  });

  test('a syntax error names its line too', async () => {
    const folder = migrationsDir({ '1720000003_typo.js': 'migrate((app) => {\n  const x = ;\n})\n' });
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-pbmig-js-syntax-'));
    try {
      const err = await startError(dir, folder.dir);
      assert.ok(err instanceof PbMigrationError, String(err));
      assert.equal(err.place.line, 2, err.message);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseFor(dir);
      folder.remove();
    }
  });
});
