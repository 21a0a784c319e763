// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DeliveryPacer, HOLD_WINDOWS } from './pacer.ts';

test('a calm loop delivers everything at once', () => {
  const p = new DeliveryPacer(3000);
  for (const u of [0, 0.3, 0.6, 0.85]) assert.equal(p.sample(u), false);
  assert.equal(p.isDeferring, false);
  assert.ok(p.mayStart(0));
});

test('a saturated loop defers events until they have waited the bound', () => {
  const p = new DeliveryPacer(3000);
  p.sample(0.97);
  assert.equal(p.isDeferring, true);
  assert.equal(p.mayStart(0), false);
  assert.equal(p.mayStart(2999), false);
  assert.ok(p.mayStart(3000), 'an event that waited the bound goes even under load');
  assert.ok(p.mayStart(60_000));
});

test('deferral lasts while the loop stays busy and ends when it calms down', () => {
  const p = new DeliveryPacer(3000);
  p.sample(1);
  for (const u of [1, 0.95, 0.8]) {
    assert.equal(p.sample(u), false);
    assert.equal(p.isDeferring, true, `still deferring at ${u} (hysteresis)`);
  }
  assert.equal(p.sample(0.2), true, 'the end of deferral is reported, so the worker wakes up');
  assert.equal(p.isDeferring, false);
  assert.ok(p.mayStart(0));
});

test('after deferral, busy windows (the worker draining) are not judged for a while', () => {
  const p = new DeliveryPacer(3000);
  p.sample(1);
  p.sample(0);
  for (let i = 0; i < HOLD_WINDOWS; i++) {
    p.sample(1);
    assert.equal(p.isDeferring, false, `window ${i} after resuming`);
  }
  p.sample(1);
  assert.equal(p.isDeferring, true, 'then a busy window defers again');
});

test('after deferral, a busy window in which events were written defers at once', () => {
  const p = new DeliveryPacer(3000);
  p.sample(1, 50);
  p.sample(0);
  p.sample(1, 0);
  assert.equal(p.isDeferring, false, 'the drain alone is not judged');
  p.sample(1, 120);
  assert.equal(p.isDeferring, true, 'requests writing events again are');
});

test('a bound of 0 never defers', () => {
  const p = new DeliveryPacer(0);
  for (let i = 0; i < 5; i++) p.sample(1);
  assert.equal(p.isDeferring, false);
  assert.ok(p.mayStart(0));
});
