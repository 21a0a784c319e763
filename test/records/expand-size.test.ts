import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ApiError } from '../../src/errors.ts';
import { checkExpandedSize } from '../../src/records/expand.ts';
import type { RecordJson } from '../../src/records/serialize.ts';

// The size check of an expanded answer (src/records/expand.ts) counts what the answer will write:
// listed records once, an expanded record each place it appears. Listed records are first bounded
// without being written; these cases sit where that bound and the written length disagree.
const limits = { records: 100, bytes: 1000 };

function refused(records: RecordJson[]): boolean {
  try {
    checkExpandedSize(records, limits);
    return false;
  } catch (err) {
    assert.ok(err instanceof ApiError, String(err));
    assert.equal(err.status, 400);
    assert.equal((err.data as { expand: { code: string } }).expand.code, 'validation_expand_too_large');
    return true;
  }
}

const record = (id: string, title: string, expand?: Record<string, unknown>): RecordJson => ({ id, title, ...(expand ? { expand } : {}) });

describe('the size bound of an expanded answer', () => {
  test('a listed record is measured as written when its bound passes the limit and its text does not', () => {
    // 600 plain characters: written, about 630; bounded (six per character), over 3,600.
    assert.equal(refused([record('a', 'x'.repeat(600), {})]), false);
    assert.equal(refused([record('a', 'x'.repeat(600), {}), record('b', 'y'.repeat(600), {})]), true);
  });

  test('characters written as escapes count at their written length', () => {
    // 200 control characters are 1,200 characters of JSON (\u0001 each).
    assert.equal(refused([record('a', '\u0001'.repeat(150), {})]), false);
    assert.equal(refused([record('a', '\u0001'.repeat(200), {})]), true);
  });

  test('a record expanded in several places counts in each', () => {
    const author = record('u', 'z'.repeat(300));
    assert.equal(refused([record('a', 'post', { author }), record('b', 'post', { author })]), false);
    assert.equal(refused([record('a', 'post', { author }), record('b', 'post', { author }), record('c', 'post', { author })]), true);
  });

  test('numbers, literals and JSON values of listed records are bounded above their written length', () => {
    const wide = { id: 'a', n: -2.2250738585072014e-308, yes: true, none: null, tags: ['x'.repeat(400)], meta: { note: 'y'.repeat(400) }, expand: {} };
    assert.equal(refused([wide as RecordJson]), false);
    assert.equal(refused([wide as RecordJson, { ...wide, id: 'b' } as RecordJson]), true);
  });
});
