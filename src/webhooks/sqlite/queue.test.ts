// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PendingQueue, type QueuedEvent } from './queue.ts';

const ev = (seq: number, origin = 'http://a', orderKey = `k${seq}`, due = 0): QueuedEvent => ({ seq, id: `e${seq}`, origin, orderKey, due, attempts: 0, inFlight: false });

test('an offered event is taken only when it directly follows what is loaded', () => {
  const q = new PendingQueue();
  q.complete = true;
  q.loadedUpTo = 4;
  q.offer(ev(5));
  assert.ok(q.has(5));
  assert.equal(q.loadedUpTo, 5);
  q.offer(ev(5));
  assert.equal(q.size, 1, 'an event already loaded is ignored');
  q.offer(ev(7));
  assert.ok(!q.has(7));
  assert.equal(q.complete, false, 'a gap (another writer) sends the worker back to the outbox');
  q.offer(ev(6));
  assert.ok(!q.has(6), 'an incomplete queue takes nothing until it is read again');
});

test('only the earliest pending event of a key may start, and only when due and not in flight', () => {
  const q = new PendingQueue();
  q.insert(ev(1, 'http://a', 'rec1'));
  q.insert(ev(2, 'http://a', 'rec1'));
  q.insert(ev(3, 'http://a', 'rec2', 5_000));
  q.insert(ev(4, 'http://b', 'rec3'));
  assert.deepEqual(q.startable('http://a', 1_000, 10).map((e) => e.seq), [1]);
  assert.deepEqual(q.startable('http://a', 9_000, 10).map((e) => e.seq), [1, 3]);
  assert.deepEqual(q.startable('http://a', 9_000, 1).map((e) => e.seq), [1]);
  q.get(1)!.inFlight = true;
  assert.deepEqual(q.startable('http://a', 9_000, 10).map((e) => e.seq), [3], 'an event in flight still holds back its key');
  q.remove(q.get(1)!);
  assert.deepEqual(q.startable('http://a', 9_000, 10).map((e) => e.seq), [2, 3]);
  assert.equal(q.nextDue(1_000), 5_000);
  assert.deepEqual(q.origins().sort(), ['http://a', 'http://b']);
});

test('a requeued event takes its place by seq', () => {
  const q = new PendingQueue();
  q.insert(ev(5, 'http://a', 'k'));
  q.insert(ev(2, 'http://a', 'k'));
  assert.deepEqual(q.startable('http://a', 0, 10).map((e) => e.seq), [2]);
  q.remove(q.get(2)!);
  q.remove(q.get(5)!);
  assert.equal(q.size, 0);
  assert.deepEqual(q.origins(), []);
});

test('a long backlog to one receiver stays in order as events finish in any order', () => {
  const q = new PendingQueue();
  for (let seq = 1; seq <= 500; seq++) q.insert(ev(seq));
  // Finished mostly from the front, some further on, as concurrent attempts do.
  const finished = new Set<number>();
  for (let seq = 1; seq <= 300; seq++) if (seq % 7 !== 0) finished.add(seq);
  for (const seq of [350, 420, 499]) finished.add(seq);
  for (const seq of finished) q.remove(q.get(seq)!);
  const left = Array.from({ length: 500 }, (_, i) => i + 1).filter((seq) => !finished.has(seq));
  assert.equal(q.size, left.length);
  assert.deepEqual(q.startable('http://a', 0, 1000).map((e) => e.seq), left);
  // Removing one twice, or a stale copy of it, changes nothing.
  const stale = ev(7);
  q.remove(stale);
  assert.ok(q.has(7));
  q.insert(ev(3));
  assert.deepEqual(q.startable('http://a', 0, 3).map((e) => e.seq), [3, 7, 14], 'a requeued event takes its place among them');
  for (const seq of [3, ...left]) q.remove(q.get(seq)!);
  assert.equal(q.size, 0);
  assert.deepEqual(q.origins(), []);
});

test('an event waiting for its first attempt is told apart from retries in backoff and attempts in flight', () => {
  const q = new PendingQueue();
  q.insert({ ...ev(1, 'http://a', 'rec1', 9_000), attempts: 2 });
  q.insert({ ...ev(3, 'http://b', 'rec3', 8_000), inFlight: true });
  q.insert(ev(2, 'http://a', 'rec2', 1_000));
  assert.equal(q.hasFirstAttemptWaitingSince(5_000), false, 'neither a retry due later nor an attempt under way waits for a first attempt');
  assert.equal(q.hasFirstAttemptWaitingSince(500), true);
  assert.equal(q.hasFirstAttemptWaitingSince(1_000), false, 'due exactly then is not after it');
});
