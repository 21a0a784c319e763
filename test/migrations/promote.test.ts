import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { apply, saveMigration, schemaMeaning } from './helpers.ts';

/** Promoting a schema from one instance to another: the workflow docs/migrations.md describes. */
describe('migrations between instances', () => {
  let dev: TestServer;
  let prod: TestServer;
  before(async () => {
    dev = await startServer();
    prod = await startServer();
  });
  after(async () => {
    await dev.close();
    await prod.close();
  });

  test('export from one instance, import into a fresh one, apply-pending: the same schema', async () => {
    // Development: schema changes through the collections API, in two databases.
    await createCollection(dev, { name: 'authors', type: 'base', fields: [{ name: 'name', type: 'text', required: true }] });
    await createCollection(dev, {
      name: 'posts',
      type: 'base',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'body', type: 'editor' },
        { name: 'author', type: 'relation', options: { toCollection: 'authors' } },
        { name: 'tags', type: 'select', options: { values: ['news', 'howto'], maxSelect: 2 } },
      ],
      indexes: ['CREATE INDEX idx_posts_title ON posts (title)'],
      listRule: '',
      viewRule: '',
    });
    assert.equal((await dev.admin('POST', '/api/databases', { body: { name: 'shop' } })).status, 200);
    await createCollection(dev, { name: 'products', type: 'base', fields: [{ name: 'sku', type: 'text', unique: true }, { name: 'price', type: 'number' }] }, 'shop');
    const users = await dev.admin('PATCH', '/api/collections/users', { body: { fields: [{ name: 'name', type: 'text', options: { max: 255 } }, { name: 'avatar', type: 'file' }, { name: 'role', type: 'text', options: { max: 255 } }, { name: 'bio', type: 'text' }] } });
    assert.equal(users.status, 200, users.text);

    const first = await dev.admin('GET', '/api/migrations/generate?name=initial%20schema');
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(Object.keys(first.body.migration.databases), ['main', 'shop']);
    assert.equal((await apply(dev, first.body.version)).status, 200, 'generated here: a no-op that records it');

    // Views and full-text search exist only as migration operations.
    const second = await saveMigration(dev, {
      name: 'search and views',
      databases: {
        main: {
          collections: {
            posts: { create_fts: { fields: ['title', 'body'] } },
            post_titles: { create_views: [{ name: 'post_titles', sql: 'SELECT id, title, created, updated FROM posts' }], update_rules: { list: '' } },
          },
        },
      },
    });
    assert.equal((await apply(dev, second)).status, 200);

    // A later change: a field redefined, another dropped (its data stays in the file).
    const patched = await dev.admin('PATCH', '/api/collections/products', { db: 'shop', body: { fields: [{ name: 'sku', type: 'text', unique: true, options: { max: 32 } }] } });
    assert.equal(patched.status, 200, patched.text);
    const third = await dev.admin('GET', '/api/migrations/generate?name=products%20cleanup');
    assert.equal(third.status, 200);
    assert.deepEqual(third.body.migration.databases.shop.collections.products.drop_columns, ['sku', 'price']);
    assert.equal((await apply(dev, third.body.version)).status, 200);
    assert.deepEqual((await dev.admin('GET', '/api/migrations/generate')).body, { changes: false });

    // Production: a fresh instance takes the archive.
    const zip = await fetch(`${dev.url}/api/migrations/export`, { headers: { authorization: `Bearer ${dev.adminToken}` } });
    assert.equal(zip.status, 200);
    assert.equal(zip.headers.get('content-type'), 'application/zip');
    const archive = Buffer.from(await zip.arrayBuffer());
    const imported = await prod.admin('POST', '/api/migrations/import', { raw: archive, headers: { 'content-type': 'application/zip' } });
    assert.equal(imported.status, 200, imported.text);
    assert.deepEqual(imported.body, { imported: [first.body.version, second, third.body.version], skipped: [] });
    assert.deepEqual((await prod.admin('GET', '/api/migrations/status')).body, { appliedCount: 0, pendingCount: 3, failedCount: 0, lastAppliedVersion: null });

    const applied = await prod.admin('POST', '/api/migrations/apply-pending');
    assert.equal(applied.status, 200, applied.text);
    assert.deepEqual(applied.body.applied, [first.body.version, second, third.body.version]);

    assert.deepEqual(schemaMeaning(await prod.services.migrations.schema()), schemaMeaning(await dev.services.migrations.schema()));
    assert.deepEqual((await prod.admin('GET', '/api/migrations/generate')).body, { changes: false });

    // The promoted schema works: relations, views and search on production.
    const author = await prod.admin('POST', '/api/collections/authors/records', { body: { name: 'Ada' } });
    const post = await prod.admin('POST', '/api/collections/posts/records', { body: { title: 'Engines', body: 'analytical engines', author: author.body.id } });
    assert.equal(post.status, 200, post.text);
    assert.equal((await prod.request('GET', '/api/collections/post_titles/records')).body.items[0].title, 'Engines');
    assert.equal((await prod.admin('GET', '/api/collections/posts/records?search=engine')).body.items.length, 0, 'no stemming without a tokenizer saying so');
    assert.equal((await prod.admin('GET', '/api/collections/posts/records?search=engines')).body.items.length, 1);

    // Importing the same archive again changes nothing.
    const again = await prod.admin('POST', '/api/migrations/import', { raw: archive, headers: { 'content-type': 'application/zip' } });
    assert.deepEqual(again.body, { imported: [], skipped: [first.body.version, second, third.body.version] });
  });
});
