import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { databaseSteps } from '../../src/internal-schema.ts';
import { applySchemaSteps } from '../../src/storage/schema-steps.ts';
import { SqliteDatabase } from '../../src/storage/sqlite/driver.ts';
import { advanceLow, hasUnfinished, insertEvent, loadPending, outboxV3Step, requeueEvent, settleEvent } from '../../src/webhooks/outbox.ts';

const target = { url: 'http://127.0.0.1:9/hook', method: 'POST', headers: {}, secret: '' };

async function write(db: SqliteDatabase, orderKey: string): Promise<number> {
  return db.transaction(async (tx) => (await insertEvent(tx, { id: `evt-${orderKey}`, source: 'trigger', name: '', collection: 'c', action: 'create', orderKey, target, body: '{}' }, new Date())).seq);
}

async function settle(db: SqliteDatabase, ...seqs: number[]): Promise<void> {
  await db.transaction(async (tx) => {
    for (const seq of seqs) await settleEvent(tx, seq, 'success', 1, 0, new Date().toISOString());
    await advanceLow(tx);
  });
}

async function low(db: SqliteDatabase): Promise<number> {
  return (await db.get<{ low: number }>('SELECT low FROM _webhook_outbox_state'))!.low;
}

async function pendingSeqs(db: SqliteDatabase, afterSeq = 0): Promise<number[]> {
  return (await loadPending(db, afterSeq, 100)).rows.map((r) => r.seq);
}

// Pending events are found from the low watermark on (no index on them): these check that it never
// passes an event that is still pending, whatever order events settle in.
describe('outbox low watermark', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-outbox-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('moves up to the first pending event as attempts are saved, down when an event is queued again', async () => {
    const db = new SqliteDatabase('w', path.join(dir, 'w.db'));
    try {
      await applySchemaSteps(db, databaseSteps);
      assert.equal(await low(db), 1);
      const [a, b, c] = [await write(db, 'a'), await write(db, 'b'), await write(db, 'c')];
      assert.deepEqual(await pendingSeqs(db), [a, b, c]);

      // Settled out of order: the watermark stops at b, which is still pending.
      await settle(db, a, c);
      assert.equal(await low(db), b);
      assert.deepEqual(await pendingSeqs(db), [b]);
      assert.equal(await hasUnfinished(db, 'b'), true);
      assert.equal(await hasUnfinished(db, 'c'), false);

      await settle(db, b);
      assert.equal(await low(db), c + 1);
      assert.deepEqual(await pendingSeqs(db), []);

      // A retry of a finished event brings the watermark back down to it.
      await requeueEvent(db, a, new Date());
      assert.equal(await low(db), a);
      assert.deepEqual(await pendingSeqs(db), [a]);
      assert.equal(await hasUnfinished(db, 'a'), true);
      // An event written after everything settled is found from the watermark too.
      await settle(db, a);
      const d = await write(db, 'd');
      assert.equal(await low(db), c + 1);
      assert.equal(d, c + 1);
      assert.deepEqual(await pendingSeqs(db), [d]);
      assert.deepEqual(await pendingSeqs(db, d), []);
    } finally {
      await db.close();
    }
  });

  test('an outbox from before the watermark keeps its pending events', async () => {
    const db = new SqliteDatabase('old', path.join(dir, 'old.db'));
    try {
      await applySchemaSteps(
        db,
        databaseSteps.filter((s) => s !== outboxV3Step),
      );
      const seqs = [await write(db, 'a'), await write(db, 'b'), await write(db, 'c')];
      await db.transaction((tx) => settleEvent(tx, seqs[0], 'success', 1, 0, new Date().toISOString()));
      await applySchemaSteps(db, databaseSteps);
      assert.equal(await low(db), seqs[1]);
      assert.deepEqual(await pendingSeqs(db), seqs.slice(1));
      const indexes = await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '_webhook_outbox'");
      assert.ok(!indexes.some((i) => i.name === '_webhook_outbox_pending'), 'the pending index is gone');
    } finally {
      await db.close();
    }
  });
});
