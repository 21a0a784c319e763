import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { startReceiver } from '../helpers/receiver.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

test('a graceful stop returns an attempt still in flight to the queue, and it is sent after restart', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-stop-'));
  const receiver = await startReceiver();
  // Long enough that only the stop, not the timeout, can end the held request.
  const env = { CAIRN_WEBHOOK_TIMEOUT_MS: '60000', CAIRN_WEBHOOK_BACKOFF_MS: '50' };
  let server: TestServer | undefined;
  try {
    receiver.respond(() => 'hang');
    server = await startServer({ dir, env });
    await createCollection(server, { name: 'jobs', fields: [{ name: 'n', type: 'number' }], options: { triggers: [{ action: 'create', url: `${receiver.url}/jobs`, method: 'POST' }] } });
    const record = await server.admin('POST', '/api/collections/jobs/records', { body: { n: 1 } });
    await waitFor(() => receiver.hanging === 1, { what: 'the attempt in flight' });
    await server.close();
    server = undefined;

    receiver.respond(() => 200);
    server = await startServer({ dir, env });
    const requests = await receiver.waitForRequests(2);
    assert.equal(requests[1].json.record.id, record.body.id);
    const logs = await waitFor(async () => {
      const res = await server!.admin('GET', '/api/webhooks/logs?collection=jobs');
      return res.body.totalItems === 2 && res.body.items;
    });
    // The interrupted attempt is logged but does not use up one of the event's attempts.
    assert.deepEqual(
      logs.map((l: any) => [l.attempt, l.status]),
      [
        [1, 'success'],
        [1, 'retrying'],
      ],
    );
    assert.match(logs[1].error, /Interrupted by shutdown/);
  } finally {
    await server?.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
