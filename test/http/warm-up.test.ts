import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { PgWireProxy } from '../helpers/pg-wire.ts';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

// The start sends a few requests through the app before it listens (src/http/warm-up.ts). They are
// nobody's: no rate limit counts them, and the request log does not hold them.
describe('the warm-up requests of a start', () => {
  test('do not count toward the rate limit of the first client', async () => {
    // The global limit is per client address; the warm-up's requests come "from" 127.0.0.1 as ours do.
    const limit = 5;
    const server = await startServer({ env: { CAIRN_RATE_LIMIT: 'on', CAIRN_RATE_LIMIT_GLOBAL: String(limit) } });
    try {
      // startServer's own administrator sign-in was one; the rest of the minute's allowance is ours.
      for (let i = 1; i < limit; i++) assert.equal((await server.request('GET', '/api/health')).status, 200, `request ${i}`);
      assert.equal((await server.request('GET', '/api/health')).status, 429);
    } finally {
      await server.close();
    }
  });

  describe('and the request log', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer();
    });
    after(() => server.close());

    test('holds the requests after the start, not the warm-up', async () => {
      await server.request('GET', '/api/health?after=start');
      // Written in the same batch as the warm-up's, had it recorded any.
      await waitFor(
        async () => {
          const list = await server.admin('GET', `/api/logs?filter=${encodeURIComponent("url ~ 'after=start'")}`);
          return list.status === 200 && list.body.items.length === 1;
        },
        { timeoutMs: 5000, what: 'the request in the log' },
      );
      const warm = await server.admin('GET', `/api/logs?filter=${encodeURIComponent("url ~ 'cairn-warm-up'")}`);
      assert.equal(warm.status, 200, warm.text);
      assert.deepEqual(warm.body.items, []);
      const health = await server.admin('GET', `/api/logs?perPage=100&filter=${encodeURIComponent("url ~ '/api/health'")}`);
      assert.equal(health.body.items.length, 1, JSON.stringify(health.body.items.map((e: any) => e.data.url)));
    });
  });

  test('open the shared-read connection on PostgreSQL, so the first view by id opens none', { skip: skipOn('sqlite', 'PostgreSQL connections') }, async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-warm-up-'));
    const proxy = await PgWireProxy.start(await databaseUrlFor(dir));
    // No kept pool: every connection is opened when something asks for it, so the count is exact.
    const server = await startServer({ dir, env: { CAIRN_DATABASE_URL: proxy.url, CAIRN_REQUEST_LOGS: 'off', CAIRN_PG_POOL_MIN: '0' } });
    try {
      await createCollection(server, { name: 'notes', fields: [{ name: 'title', type: 'text' }], listRule: '', viewRule: '' });
      const created = await server.admin('POST', '/api/collections/notes/records', { body: { title: 'one' } });
      assert.equal(created.status, 200, created.text);
      const opened = proxy.opened;
      // A guest's view by id is a read by key (Database.lookup): on the database's shared-read connection.
      const view = await server.request('GET', `/api/collections/notes/records/${created.body.id}`);
      assert.equal(view.status, 200, view.text);
      assert.equal(view.body.title, 'one');
      assert.equal(proxy.opened, opened, 'the view opened a connection');
      assert.ok(proxy.executed(/ FROM "notes" t0 WHERE t0\.id = \$1$/) > 0, 'the view was read through the proxy');
    } finally {
      await server.close();
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
      await dropDatabaseFor(dir);
    }
  });
});
