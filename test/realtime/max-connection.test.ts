import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { RecordSubscription } from 'pocketbase';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { closeSdkClients, sdkClient, SseStream } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * A realtime stream ends after the longest a connection may last (PocketBase ≥ 0.38: 30 minutes;
 * here `CAIRN_REALTIME_MAX_CONNECTION_MS` makes it a second), and PocketBase's SDK connects again,
 * subscribes anew and goes on receiving.
 */
describe('realtime connections end after their longest time', () => {
  const MAX_MS = 1000;
  let server: TestServer;

  before(async () => {
    server = await startServer({ env: { CAIRN_REALTIME_MAX_CONNECTION_MS: String(MAX_MS), CAIRN_REALTIME_KEEPALIVE_MS: '100' } });
    await createCollection(server, { name: 'notes', fields: [{ name: 'text', type: 'text' }], listRule: '', viewRule: '' });
  });
  after(async () => {
    closeSdkClients();
    await server?.close();
  });

  test('the server ends the stream, not before its time', async () => {
    const opened = Date.now();
    const stream = await SseStream.open(server.url);
    try {
      await waitFor(() => stream.ended, { what: 'the end of the stream', timeoutMs: 20_000 });
      assert.ok(Date.now() - opened >= MAX_MS, `ended after ${Date.now() - opened} ms`);
    } finally {
      stream.close();
    }
  });

  test("the SDK connects again and its subscription goes on", async () => {
    const pb = sdkClient(server.url);
    const seen: string[] = [];
    await pb.collection('notes').subscribe('*', (e: RecordSubscription<{ text: string }>) => seen.push(e.record.text));
    const first = pb.realtime.clientId;
    await waitFor(() => pb.realtime.clientId !== '' && pb.realtime.clientId !== first, { what: 'a new connection', timeoutMs: 20_000 });
    // Subscribed anew on the new connection: a change reaches it.
    await waitFor(
      async () => {
        await server.admin('POST', '/api/collections/notes/records', { body: { text: `after ${seen.length}` } });
        return seen.length > 0;
      },
      { what: 'a change after the reconnection', timeoutMs: 20_000, intervalMs: 100 },
    );
    assert.match(seen[0], /^after /);
  });
});
