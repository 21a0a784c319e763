// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isRecordId, newRecordId } from '../../src/lib/ids.ts';

test('record ids are 15 characters of [a-z0-9], random after their time prefix', () => {
  const ids = Array.from({ length: 2000 }, () => newRecordId(Date.UTC(2026, 10, 25, 12)));
  assert.ok(ids.every(isRecordId));
  // Same moment: same 8-character prefix, distinct random tails.
  assert.equal(new Set(ids.map((id) => id.slice(0, 8))).size, 1);
  assert.equal(new Set(ids).size, ids.length);
});

test('ids made later sort after earlier ones (what keeps an id index appending), until 2109', () => {
  const moments = [Date.UTC(2020, 0, 1), Date.UTC(2020, 0, 1) + 1, Date.UTC(2026, 10, 25), Date.UTC(2026, 10, 25) + 1, Date.UTC(2099, 0, 1), Date.UTC(2108, 11, 31)];
  const ids = moments.map((ms) => newRecordId(ms));
  assert.deepEqual([...ids].sort(), ids);
  // Byte order and a collation that sorts digits before letters agree on these ids.
  assert.deepEqual([...ids].sort((a, b) => a.localeCompare(b, 'en')), ids);
  assert.ok(ids.every(isRecordId));
});
