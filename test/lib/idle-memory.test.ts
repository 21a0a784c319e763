// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { releaseMemoryWhenIdle } from '../../src/lib/idle-memory.ts';
import { waitFor } from '../helpers/wait.ts';

test('an idle process whose heap grew gives the memory back, once per growth', async () => {
  const releases: Array<{ before: number; after: number }> = [];
  const stop = releaseMemoryWhenIdle({ checkMs: 20, idleChecks: 1, growthBytes: 1, onRelease: (r) => releases.push(r) });
  // Garbage enough to grow the heap past what it was when the watch began, then an idle loop.
  let garbage: unknown[] | undefined = Array.from({ length: 200_000 }, (_, i) => ({ i, s: `item ${i}` }));
  garbage = undefined;
  try {
    await waitFor(() => releases.length > 0, { timeoutMs: 10_000, what: 'a release' });
    assert.ok(releases[0].after <= releases[0].before, `committed heap ${releases[0].before} → ${releases[0].after}`);
  } finally {
    stop();
  }
  assert.equal(garbage, undefined);
});
