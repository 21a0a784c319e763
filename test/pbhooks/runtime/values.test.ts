// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
// Pure modules of the pb_hooks runtime: DateTime, dbx expressions, models, errors, $security, toString.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DateTime, GoTime, goFormat, msOf, ZERO_MS } from '../../../src/pbhooks/runtime/datetime.ts';
import { $dbx, quoteName } from '../../../src/pbhooks/runtime/dbx.ts';
import { ApiError, NotFoundError, revive, serialize } from '../../../src/pbhooks/runtime/errors.ts';
import { arrayOf, DynamicModel, fill } from '../../../src/pbhooks/runtime/models.ts';
import { plain, toStringOf } from '../../../src/pbhooks/runtime/realm.ts';
import { $security } from '../../../src/pbhooks/runtime/security.ts';

describe('datetime', () => {
  test('a DateTime prints in PocketBase layout, and an empty one is zero', () => {
    assert.equal(new DateTime('2024-02-29 10:11:12.345Z').string(), '2024-02-29 10:11:12.345Z');
    assert.equal(new DateTime('').string(), '');
    assert.equal(new DateTime('').isZero(), true);
    assert.equal(msOf(null), ZERO_MS);
  });
  test('addDate overflows as Go does and format takes Go layouts', () => {
    const t = new DateTime('2023-01-31 00:00:00.000Z').addDate(0, 1, 0);
    assert.equal(t.string(), '2023-03-03 00:00:00.000Z');
    assert.equal(goFormat(Date.UTC(2024, 6, 4, 15, 4, 5), 'Mon Jan _2 2006 03:04 PM'), 'Thu Jul  4 2024 03:04 PM');
    assert.equal(new GoTime(Date.UTC(2024, 0, 1)).add(90 * 60 * 1e9).format('15:04'), '01:30');
  });
  test('a number is seconds since the epoch', () => {
    assert.equal(new DateTime(86400).string(), '1970-01-02 00:00:00.000Z');
  });
});

describe('dbx', () => {
  test('hashExp sorts keys, binds values and turns null and arrays into IS NULL and IN', () => {
    const params: any = {};
    const sql = $dbx.hashExp({ b: [1, 2], a: null, c: 'x' }).build(params);
    assert.match(sql, /^"a" IS NULL AND "b" IN \(\{:dbx_p\d+\}, \{:dbx_p\d+\}\) AND "c"=\{:dbx_p\d+\}$/);
    assert.deepEqual(Object.values(params), [1, 2, 'x']);
  });
  test('like escapes the wildcards of its value; match() chooses the sides', () => {
    const params: any = {};
    const sql = $dbx.like('title', '50%_off').match(false, true).build(params);
    assert.match(sql, /"title" LIKE \{:dbx_p\d+\} ESCAPE '\\'/);
    assert.deepEqual(Object.values(params), ['50\\%\\_off%']);
  });
  test('names are quoted, aliases kept, functions left as written', () => {
    assert.equal(quoteName('p.title as t'), '"p"."title" AS "t"');
    assert.equal(quoteName('COUNT(*)'), 'COUNT(*)');
    assert.equal($dbx.not($dbx.exp('')).build({}), '');
  });
});

describe('models', () => {
  test('fill converts a row to the model value types', () => {
    const out = fill(new DynamicModel({ n: 0, ok: false, s: '', j: {} }), { n: '4', ok: 1, s: null, j: '{"a":1}' });
    assert.deepEqual({ ...out }, { n: 4, ok: true, s: '', j: { a: 1 } });
    assert.ok(out instanceof DynamicModel);
  });
  test('arrayOf is an empty array that remembers its model', () => {
    const m = new DynamicModel({ x: 0 });
    const list = arrayOf(m);
    assert.equal(list.length, 0);
    assert.equal(list.__model, m);
  });
});

describe('errors', () => {
  test('an API error keeps its status across the host, also a Go-style code', () => {
    assert.deepEqual(serialize(new NotFoundError()), { status: 404, message: "The requested resource wasn't found.", data: {} });
    assert.equal(serialize({ code: 409, message: 'taken' }).status, 409);
    const back = revive({ status: 403, message: 'no', data: { a: 1 } });
    assert.ok(back instanceof ApiError);
    assert.equal((back as ApiError).status, 403);
    assert.equal(serialize(new Error('boom')).status, undefined);
  });
});

describe('security', () => {
  test('a JWT it creates parses with the same secret and fails with another', () => {
    const token = $security.createJWT({ sub: 'u1' }, 'secret', 60);
    assert.equal($security.parseJWT(token, 'secret').sub, 'u1');
    assert.throws(() => $security.parseJWT(token, 'other'), /signature/);
    assert.equal($security.parseUnverifiedJWT(token).sub, 'u1');
  });
  test('random strings use the alphabet given; hashes are hex', () => {
    assert.match($security.randomStringWithAlphabet(30, 'ab'), /^[ab]{30}$/);
    assert.equal($security.md5('x'), '9dd4e461268c8034f5c8564e155c67a6');
    assert.equal($security.equal('a', 'a'), true);
    assert.equal($security.equal('a', 'ab'), false);
  });
});

describe('realm values', () => {
  test('toString reads bytes as text and the rest as JSON; plain drops functions', () => {
    assert.equal(toStringOf([104, 105]), 'hi');
    assert.equal(toStringOf({ a: 1 }), '{"a":1}');
    assert.equal(toStringOf(null), '');
    assert.deepEqual(plain({ a: 1, f: () => 1, r: { __data: () => ({ id: 'x' }) } }), { a: 1, r: { id: 'x' } });
  });
});
