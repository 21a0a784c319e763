import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { registerFieldType } from '../../src/collections/fields/registry.ts';
import { fileField } from '../../src/files/field.ts';
import { databaseSteps } from '../../src/internal-schema.ts';
import { applySchemaSteps } from '../../src/storage/schema-steps.ts';
import { SqliteDatabase } from '../../src/storage/sqlite/driver.ts';
import { advanceLow, eventsBySeq, hasUnfinished, insertEvent, loadPending, outboxV3Step, requeueEvent, settleEvent, type TargetIds } from '../../src/webhooks/sqlite/outbox.ts';
import { sqliteOutbox } from '../../src/webhooks/sqlite/store.ts';
import { triggerBody } from '../../src/webhooks/types.ts';
import { skipOn } from '../helpers/postgres.ts';

// Every database's default users has PocketBase's file avatar; the app registers the file type (app.ts).
registerFieldType(fileField);

const SQLITE_STEPS = databaseSteps(sqliteOutbox());

const target = { url: 'http://127.0.0.1:9/hook', method: 'POST', headers: {}, secret: '' };

async function write(db: SqliteDatabase, orderKey: string, ids: TargetIds = new Map()): Promise<number> {
  return db.transaction(
    async (tx) => (await insertEvent(tx, ids, { id: `evt-${orderKey}`, source: 'trigger', name: '', collection: 'c', action: 'create', orderKey, target, body: '{}' }, new Date())).seq,
  );
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

async function eventBySeq(db: SqliteDatabase, seq: number) {
  return (await eventsBySeq(db, [seq])).get(seq);
}

async function pendingSeqs(db: SqliteDatabase, afterSeq = 0): Promise<number[]> {
  return (await loadPending(db, afterSeq, 100)).rows.map((r) => r.seq);
}

// Pending events are found from the low watermark on (no index on them): these check that it never
// passes an event that is still pending, whatever order events settle in.
describe('outbox low watermark', { skip: skipOn('postgres', "SQLite's outbox (a low watermark, no leases)") }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-outbox-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('moves up to the first pending event as attempts are saved, down when an event is queued again', async () => {
    const db = new SqliteDatabase('w', path.join(dir, 'w.db'));
    try {
      await applySchemaSteps(db, SQLITE_STEPS);
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

  test('an outbox from before the watermark and the targets table keeps its pending events and their targets', async () => {
    const db = new SqliteDatabase('old', path.join(dir, 'old.db'));
    try {
      // The schema as it was before the watermark (every step before it, in order).
      await applySchemaSteps(db, SQLITE_STEPS.slice(0, SQLITE_STEPS.indexOf(outboxV3Step)));
      // Rows as the version before wrote them: every column of the target in each event.
      const insert = `INSERT INTO _webhook_outbox (id, source, name, collection, action, orderKey, url, method, origin, headers, secret, body, status, attempts, nextAttemptAt, created, updated)
        VALUES (?, 'trigger', '', 'c', 'create', ?, ?, 'POST', ?, ?, ?, '{}', ?, 0, 0, '2026-01-01', '2026-01-01')`;
      await db.run(insert, ['e1', 'a', 'http://127.0.0.1:9/a', 'http://127.0.0.1:9', '{}', '', 'success']);
      await db.run(insert, ['e2', 'b', 'http://127.0.0.1:9/a', 'http://127.0.0.1:9', '{}', '', 'pending']);
      await db.run(insert, ['e3', 'c', 'http://127.0.0.1:8/b', 'http://127.0.0.1:8', '{"x-k":"v"}', 's3cr3t', 'pending']);
      await applySchemaSteps(db, SQLITE_STEPS);
      assert.equal(await low(db), 2);
      assert.deepEqual(await pendingSeqs(db), [2, 3]);
      const indexes = await db.all<{ name: string }>("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '_webhook_outbox'");
      assert.ok(!indexes.some((i) => i.name === '_webhook_outbox_pending'), 'the pending index is gone');
      // Two distinct targets, and each event reads back with its own.
      assert.equal((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM _webhook_targets'))!.n, 2);
      const e3 = await eventBySeq(db, 3);
      assert.deepEqual([e3?.id, e3?.url, e3?.origin, e3?.headers, e3?.secret, e3?.orderKey], ['e3', 'http://127.0.0.1:8/b', 'http://127.0.0.1:8', '{"x-k":"v"}', 's3cr3t', 'c']);
      assert.equal((await eventBySeq(db, 1))?.url, 'http://127.0.0.1:9/a');
    } finally {
      await db.close();
    }
  });

  test('events share their target row; a cached id that went stale is looked up again', async () => {
    const db = new SqliteDatabase('targets', path.join(dir, 'targets.db'));
    try {
      await applySchemaSteps(db, SQLITE_STEPS);
      const ids: TargetIds = new Map();
      // The first target row is written in a transaction that rolls back: the id it cached is stale.
      await assert.rejects(
        db.transaction(async (tx) => {
          await insertEvent(tx, ids, { id: 'gone', source: 'trigger', name: '', collection: 'c', action: 'create', orderKey: 'k', target, body: '{}' }, new Date());
          throw new Error('the record change failed');
        }),
      );
      assert.equal(ids.size, 1);
      await db.run("INSERT INTO _webhook_targets (key, source, name, collection, action, url, method, origin, headers, secret) VALUES ('other', 'cron', 'x', '', 'cron', 'http://x', 'GET', 'http://x', '{}', '')");
      const a = await write(db, 'a', ids);
      const b = await write(db, 'b', ids);
      const rows = await db.all<{ target: number }>('SELECT target FROM _webhook_outbox ORDER BY seq');
      assert.equal(rows.length, 2);
      assert.equal(rows[0].target, rows[1].target);
      assert.equal((await eventBySeq(db, a))?.url, target.url);
      assert.equal((await eventBySeq(db, b))?.collection, 'c');
      assert.equal((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM _webhook_targets'))!.n, 2);
    } finally {
      await db.close();
    }
  });

  test('a trigger body built from its stored change is byte for byte the JSON of the whole event (it is signed as such)', () => {
    const record = { id: 'r1', title: 'quote " backslash \\ line\nbreak é 😀 \u2028', n: 1.5, none: null, list: [1, 'a'] };
    const oldRecord = { ...record, title: 'before' };
    const row = { id: '0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b', action: 'update', collection: 'posts', created: '2026-11-23T16:00:00.000Z' };
    const whole = JSON.stringify({ id: row.id, event: 'record.update', database: 'db_1', collection: 'posts', record, oldRecord, timestamp: row.created });
    assert.equal(triggerBody(row, 'db_1', `"record":${JSON.stringify(record)},"oldRecord":${JSON.stringify(oldRecord)}`), whole);
  });
});
