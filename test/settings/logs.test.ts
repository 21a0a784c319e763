import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

describe('the logs settings take effect when saved', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const save = async (logs: Record<string, unknown>) => {
    const res = await server.admin('PATCH', '/api/settings', { body: { logs } });
    assert.equal(res.status, 200, res.text);
  };
  /** Makes a request marked by `tag` and returns its log entry once written (undefined if never). */
  const logged = async (tag: string, status = 200, timeoutMs = 5000) => {
    const path = status === 200 ? `/api/health?tag=${tag}` : `/api/collections/missing_${tag}/records`;
    const res = await server.admin('GET', path);
    assert.equal(res.status, status);
    const filter = encodeURIComponent(`url ~ '${tag}'`);
    try {
      return await waitFor(
        async () => {
          const list = await server.admin('GET', `/api/logs?filter=${filter}`);
          return list.body.items?.[0];
        },
        { timeoutMs, what: `the log entry of ${tag}` },
      );
    } catch {
      return undefined;
    }
  };

  test('by default (CAIRN_REQUEST_LOGS) requests are recorded with IP and auth id', async () => {
    const entry = await logged('defaulttag');
    assert.ok(entry);
    assert.equal(entry.data.userIp, '127.0.0.1');
    assert.notEqual(entry.data.authId, '');
  });

  test('logIP and logAuthId false leave them out of new entries', async () => {
    await save({ maxDays: 7, logIP: false, logAuthId: false });
    const entry = await logged('noiptag');
    assert.ok(entry);
    assert.equal(entry.data.userIp, '');
    assert.equal(entry.data.remoteIp, '');
    assert.equal(entry.data.authId, '');
  });

  test('minLevel 8 keeps only failed requests', async () => {
    await save({ maxDays: 7, minLevel: 8, logIP: true, logAuthId: true });
    const failed = await logged('failedtag', 404);
    assert.ok(failed);
    // A later entry that is written shows the earlier, successful one was passed over, not delayed.
    await server.admin('GET', '/api/health?tag=skippedtag');
    assert.ok(await logged('aftertag', 404));
    const skipped = await server.admin('GET', `/api/logs?filter=${encodeURIComponent("url = '/api/health?tag=skippedtag'")}`);
    assert.equal(skipped.body.totalItems, 0, 'skipped recorded');
  });

  test('maxDays 0 records nothing; maxDays prunes older entries when the cleanup job runs', async () => {
    await save({ maxDays: 0, minLevel: 0 });
    await server.admin('GET', '/api/health?tag=offtag');
    await save({ maxDays: 30 });
    assert.ok(await logged('ontag'));
    const off = await server.admin('GET', `/api/logs?filter=${encodeURIComponent("url = '/api/health?tag=offtag'")}`);
    assert.equal(off.body.totalItems, 0, 'recorded while off');

    const old = Date.now() - 10 * 86_400_000;
    server.services.requestLogs.record({ time: old, method: 'GET', url: '/api/oldentrytag', status: 200, execTime: 1, auth: 'guest', authId: '', database: '', userIp: '', remoteIp: '', userAgent: '', referer: '', error: '' });
    const oldFilter = `/api/logs?filter=${encodeURIComponent("url = '/api/oldentrytag'")}`;
    await waitFor(async () => (await server.admin('GET', oldFilter)).body.totalItems === 1, { what: 'the old entry' });
    // Ids are the write time (ms × 1024): backdate this one's, as if written ten days ago.
    await server.services.registry.logs.run("UPDATE _request_logs SET id = ? WHERE url = '/api/oldentrytag'", [old * 1024]);
    const keep = await server.admin('POST', '/api/crons/__pbLogsCleanup__');
    assert.equal(keep.status, 204, keep.text);
    assert.equal((await server.admin('GET', oldFilter)).body.totalItems, 1);
    await save({ maxDays: 5 });
    await server.admin('POST', '/api/crons/__pbLogsCleanup__');
    assert.equal((await server.admin('GET', oldFilter)).body.totalItems, 0, 'not pruned');
    assert.ok((await server.admin('GET', `/api/logs?filter=${encodeURIComponent("url ~ 'ontag'")}`)).body.totalItems >= 1);
  });
});
