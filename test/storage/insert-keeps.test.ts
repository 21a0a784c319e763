import assert from 'node:assert/strict';
import { test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { sqliteDialect } from '../../src/storage/sqlite/dialect.ts';

// A create skips RETURNING when the dialect says every value reads back as bound (records/write/statement.ts).
// This holds the SQLite dialect's answer against SQLite itself: wherever it says "kept", it must be.
// The declared types are Cairn's own and the kinds an adopted table may have.
const DECLARED = ['TEXT', 'TEXT COLLATE NOCASE', 'NUMERIC', 'BOOLEAN', 'JSON', 'INTEGER', 'REAL', 'DOUBLE', 'VARCHAR(20)', 'BLOB', '', 'DATETIME'];
const VALUES: unknown[] = [
  '', 'hello', ' 12 ', '12', '-3.5', '+7', '.5', '1e5', '1E-2', '0x1A', '12abc', 'inf', 'Infinity', 'NaN', '1.2.3', '  ', '[1,2]', '{"a":1}', '"x"',
  'true', 'null', '2026-11-25T10:00:00.000Z', '00012', '9007199254740993',
  0, 1, -1, 1.5, -0, 2 ** 53, 2 ** 60, 1e300, 5e-324, Number.MAX_SAFE_INTEGER, Infinity, NaN, null,
];

test('SQLite: a value the dialect says an insert keeps reads back exactly as bound', () => {
  const db = new BetterSqlite3(':memory:');
  const insertKeeps = sqliteDialect.insertKeeps!;
  let kept = 0;
  for (const [i, type] of DECLARED.entries()) {
    db.exec(`CREATE TABLE t${i} (v ${type})`);
    const insert = db.prepare(`INSERT INTO t${i} (v) VALUES (?) RETURNING v`);
    for (const value of VALUES) {
      const back = (insert.get(value) as { v: unknown }).v;
      if (!insertKeeps(type, value)) continue;
      kept++;
      assert.ok(Object.is(back, value), `${type} column: ${JSON.stringify(value)} read back as ${JSON.stringify(back)} (${typeof back})`);
    }
  }
  // Not vacuous: the common cases (text into TEXT, numbers into NUMERIC, JSON text into JSON) are kept.
  assert.ok(insertKeeps('TEXT', '12') && insertKeeps('NUMERIC', 12) && insertKeeps('JSON', '[1,2]') && insertKeeps('BOOLEAN', 1));
  assert.ok(!insertKeeps('JSON', '12') && !insertKeeps('TEXT', 12) && !insertKeeps('NUMERIC', ' 12 '));
  assert.ok(kept > 100, `only ${kept} pairs were judged kept`);
  db.close();
});
