import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
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
});
