import assert from 'node:assert/strict';
import { SqliteBackend } from '../../src/storage/sqlite/backend.ts';
import { sqliteOutbox } from '../../src/webhooks/sqlite/store.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { registerFieldType } from '../../src/collections/fields/registry.ts';
import { fileField } from '../../src/files/field.ts';
import { databaseSteps, systemSteps } from '../../src/internal-schema.ts';

// Every database's default users has PocketBase's file avatar; the app registers the file type (app.ts).
registerFieldType(fileField);
import { uuidv7 } from '../../src/lib/ids.ts';
import { silentLogger } from '../../src/lib/logger.ts';
import { DatabaseRegistry } from '../../src/storage/registry.ts';
import type { Database } from '../../src/storage/index.ts';
import { insertEvent, type TargetIds } from '../../src/webhooks/sqlite/outbox.ts';
import type { Pacer } from '../../src/webhooks/sqlite/pacer.ts';
import { DeliveryWorker } from '../../src/webhooks/sqlite/worker.ts';
import type { PendingRow } from '../../src/webhooks/types.ts';
import { type Received, type Receiver, startReceiver } from '../helpers/receiver.ts';
import { skipOn } from '../helpers/postgres.ts';
import { waitFor } from '../helpers/wait.ts';

// The delivery worker while the event loop stays saturated (src/webhooks/sqlite/pacer.ts): new attempts wait
// until their events are overdue, and the worker reads the outbox a little at a time rather than the
// whole backlog the requests are adding to. These check that nothing is lost or held back by that.
const MAX_DEFER_MS = 300;
// The worker of SQLite's single process, on SQLite's outbox; PostgreSQL's nodes take events by lease.
const skip = skipOn('postgres', "the single-process worker on SQLite's outbox");
// Saturated for the whole test, whatever the real event loop does.
const busy: Pacer = { isDeferring: true, sample: () => false, mayStart: (waitedMs) => waitedMs >= MAX_DEFER_MS };

let dir: string;
let registry: DatabaseRegistry;
let db: Database;
let worker: DeliveryWorker;
const receivers: Receiver[] = [];
/** Numbers events in the order they are written. */
let written = 0;

beforeEach(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'cairn-deferral-'));
  registry = new DatabaseRegistry({ dir, backend: new SqliteBackend(dir), systemSteps, databaseSteps: databaseSteps(sqliteOutbox()) });
  await registry.start();
  db = await registry.get('main');
  worker = new DeliveryWorker({ registry, secret: 'x'.repeat(32), timeoutMs: 2000, maxAttempts: 5, backoffMs: 60_000, maxDeferMs: MAX_DEFER_MS, pacer: busy, node: 'test', log: silentLogger });
  worker.start();
});

afterEach(async () => {
  await worker.stop();
  await registry.close();
  for (const r of receivers.splice(0)) await r.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A receiver that notes when each request arrived, and answers `status`. */
async function receiver(status: number): Promise<{ r: Receiver; arrived: number[] }> {
  const r = await startReceiver();
  receivers.push(r);
  const arrived: number[] = [];
  r.respond(() => {
    arrived.push(Date.now());
    return status;
  });
  return { r, arrived };
}

/** Writes one event per key in one transaction, handing them to the worker once committed, as the change hook does. */
async function write(url: string, keys: string[]): Promise<number> {
  const ids: TargetIds = new Map();
  const writtenAt = Date.now();
  await db.transaction(async (tx) => {
    const rows: PendingRow[] = [];
    for (const key of keys) {
      const body = JSON.stringify({ key, writtenAt, n: written++ });
      rows.push(await insertEvent(tx, ids, { id: uuidv7(), source: 'trigger', name: '', collection: 'c', action: 'create', orderKey: key, target: { url, method: 'POST', headers: {}, secret: '' }, body }, new Date(writtenAt)));
    }
    tx.afterCommit(() => worker.committed('main', rows));
  });
  return writtenAt;
}

function keysOf(requests: Received[]): Map<string, number[]> {
  const byKey = new Map<string, number[]>();
  for (const r of requests) byKey.set(r.json.key, [...(byKey.get(r.json.key) ?? []), r.json.n]);
  return byKey;
}

test('a backlog larger than one read arrives whole, once, in order per key, each event only once overdue', { skip }, async () => {
  const { r, arrived } = await receiver(204);
  const BATCHES = 6;
  const PER_BATCH = 100;
  for (let b = 0; b < BATCHES; b++) await write(`${r.url}/hook`, Array.from({ length: PER_BATCH }, (_, i) => `record-${(b * PER_BATCH + i) % 40}`));

  const requests = await r.waitForRequests(BATCHES * PER_BATCH, 20_000);
  requests.forEach((req, n) => assert.ok(arrived[n] - req.json.writtenAt >= MAX_DEFER_MS - 5, `event ${n} went ${arrived[n] - req.json.writtenAt} ms after its write`));
  for (const [key, order] of keysOf(requests)) assert.deepEqual(order, [...order].sort((a, b) => a - b), `events of ${key} out of order`);
  await worker.save();
  assert.equal(r.requests.length, BATCHES * PER_BATCH, 'no event sent twice');
});

test("events in backoff at a failing receiver do not hold back another receiver's overdue events", { skip }, async () => {
  const down = await receiver(500);
  const up = await receiver(204);
  await write(`${down.r.url}/hook`, Array.from({ length: 300 }, (_, i) => `a-${i}`));
  // Every first attempt failed: those events now wait a minute for their retry, in the worker's queue.
  await down.r.waitForRequests(300, 20_000);
  await waitFor(async () => (await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM _webhook_outbox WHERE attempts = 1'))!.n === 300, { what: 'the failed attempts to be saved' });

  const writtenAt = await write(`${up.r.url}/hook`, Array.from({ length: 20 }, (_, i) => `b-${i}`));
  await up.r.waitForRequests(20, 10_000);
  assert.ok(Math.min(...up.arrived) - writtenAt >= MAX_DEFER_MS - 5, 'overdue, not sooner');
  assert.equal(down.r.requests.length, 300, 'the failing receiver got no early retry');
});
