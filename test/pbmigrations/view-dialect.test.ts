// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bareColumnAt, sqliteViewForPostgres as rewrite } from '../../src/migrations/view-dialect.ts';

/** The rewrite of a PocketBase view query (SQLite's dialect) for PostgreSQL, text in, text out. */

test('names: backticks and brackets become double quotes, mixed-case bare names are quoted, keywords and lower-case names stay', () => {
  assert.equal(rewrite('SELECT id, [label] FROM `Client` c WHERE c.isActive == TRUE'), 'SELECT id, "label" FROM "Client" c WHERE c."isActive" = TRUE');
  assert.equal(rewrite('Select id From posts'), 'Select id From posts');
});

test('string literals are never rewritten', () => {
  assert.equal(rewrite("SELECT id FROM t WHERE note = 'a == `b` julianday(x) isOpen'"), "SELECT id FROM t WHERE note = 'a == `b` julianday(x) isOpen'");
});

test('dates: strftime to to_char, %s to epoch seconds, julianday, datetime with modifiers', () => {
  assert.equal(rewrite("SELECT strftime('%Y-%m', created) AS m FROM t"), "SELECT to_char(CAST(NULLIF(CAST(created AS text), '') AS timestamptz) AT TIME ZONE 'UTC', 'YYYY-MM') AS m FROM t");
  assert.match(rewrite("SELECT strftime('%s', created) FROM t"), /^SELECT CAST\(CAST\(EXTRACT\(EPOCH FROM CAST/);
  assert.match(rewrite('SELECT julianday(updated) - julianday(created) FROM t'), /\/ 86400\.0 \+ 2440587\.5\) - \(EXTRACT/);
  assert.equal(rewrite("SELECT datetime('now', '-7 days', 'start of day')"), "SELECT to_char(date_trunc('day', (CURRENT_TIMESTAMP + INTERVAL '-7 days')) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS')");
  // A format to_char has no match for stays SQLite's, and PostgreSQL's error stands.
  assert.equal(rewrite("SELECT strftime('%J', created) FROM t"), "SELECT strftime('%J', created) FROM t");
});

test('JSON and aggregates: json_extract paths, json_group_array/json_object, group_concat, ifnull, iif, round to places', () => {
  assert.equal(rewrite("SELECT json_extract(data, '$.a[0].b') FROM t"), `SELECT (CAST(data AS jsonb) #>> '{"a","0","b"}') FROM t`);
  assert.equal(rewrite("SELECT json_group_array(json_object('w', w)) FROM t"), "SELECT json_agg(json_build_object('w', w)) FROM t");
  assert.equal(rewrite("SELECT group_concat(name, '; '), ifnull(a, 0), iif(a > 1, 'x', 'y'), round(avg(p), 2) FROM t"), "SELECT string_agg(CAST(name AS text), '; '), COALESCE(a, 0), (CASE WHEN a > 1 THEN 'x' ELSE 'y' END), round(CAST(avg(p) AS numeric), 2) FROM t");
});

test('a JOIN without ON or USING (SQLite\'s cross join) gets ON TRUE; CROSS and NATURAL joins and joins with ON stay', () => {
  assert.equal(rewrite('SELECT a.id FROM a JOIN users WHERE a.x = 1'), 'SELECT a.id FROM a JOIN users ON TRUE WHERE a.x = 1');
  assert.equal(rewrite('SELECT a.id FROM a JOIN users u'), 'SELECT a.id FROM a JOIN users u ON TRUE');
  assert.equal(rewrite('SELECT a.id FROM a LEFT JOIN b AS bb ON bb.id = a.b JOIN c WHERE 1 = 1'), 'SELECT a.id FROM a LEFT JOIN b AS bb ON bb.id = a.b JOIN c ON TRUE WHERE 1 = 1');
  assert.equal(rewrite('SELECT a.id FROM a CROSS JOIN b WHERE 1 = 1'), 'SELECT a.id FROM a CROSS JOIN b WHERE 1 = 1');
});

test('a string literal as an alias becomes a name; a bare column beside an aggregate is read from one row of its group, keeping its name', () => {
  assert.equal(rewrite("SELECT name AS 'Full Name' FROM t"), 'SELECT name AS "Full Name" FROM t');
  const sql = 'SELECT c.id, c.chore, MAX(c.created) AS last FROM c GROUP BY c.chore';
  assert.equal(bareColumnAt(sql, sql.indexOf('c.id')), 'SELECT (array_agg(c.id))[1] AS "id", c.chore, MAX(c.created) AS last FROM c GROUP BY c.chore');
  assert.equal(bareColumnAt('SELECT x FROM t ORDER BY t.y', 'SELECT x FROM t ORDER BY '.length), 'SELECT x FROM t ORDER BY (array_agg(t.y))[1]');
});

test('0 and 1 compared with a column PostgreSQL stores as boolean become FALSE and TRUE; other columns keep their numbers', () => {
  const booleans = new Set(['completed', 'isPaid']);
  assert.equal(rewrite('SELECT id FROM s WHERE s.completed = 0 AND "isPaid" != 1 AND count = 1', booleans), 'SELECT id FROM s WHERE s.completed = FALSE AND "isPaid" != TRUE AND count = 1');
});
