import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { type Receiver, startReceiver } from '../helpers/receiver.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Databases open when a request names them or a worker has work in them (docs/footprint.md): after a
 * restart, one without background work stays closed, while a cron job in another is found (through
 * DatabaseRegistry.peek) and runs without any request naming its database.
 */
test('after a restart, databases open lazily and workers still find their work', async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-lazy-'));
  let receiver: Receiver | undefined;
  let server: TestServer | undefined;
  after(async () => {
    await server?.close();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  receiver = await startReceiver();
  server = await startServer({ dir });
  for (const name of ['quiet', 'ticking']) {
    assert.equal((await server.admin('POST', '/api/databases', { body: { name } })).status, 200);
    const made: { status: number; text: string } = await server.admin('POST', '/api/collections', { db: name, body: { name: 'notes', type: 'base', fields: [{ name: 'title', type: 'text' }] } });
    assert.equal(made.status, 200, made.text);
  }
  const job: { status: number; text: string } = await server.admin('POST', '/api/webhooks/cron', { db: 'ticking', body: { name: 'tick', schedule: '@every 1s', url: `${receiver.url}/tick`, method: 'POST' } });
  assert.equal(job.status, 200, job.text);
  await server.close();

  server = await startServer({ dir });
  const registry = server.services.registry;
  const before = receiver.requests.length;
  await waitFor(() => receiver!.requests.slice(before).some((r) => r.path === '/tick'), { timeoutMs: 10_000, what: 'a cron run in a database no request named' });
  assert.ok(registry.openedNames().includes('ticking'), 'the database with a job was opened to run it');
  // On PostgreSQL the delivery worker polls every schema (other nodes write events into any), and
  // a schema's handle costs no connection: there every database is opened by that poll.
  if (registry.dialect.name === 'sqlite') assert.ok(!registry.openedNames().includes('quiet'), 'a database without background work stays closed');

  // Named by a request, it opens and answers as any other.
  const listed: { status: number; text: string } = await server.admin('GET', '/api/collections/notes/records', { db: 'quiet' });
  assert.equal(listed.status, 200, listed.text);
  assert.ok(registry.openedNames().includes('quiet'));
});
