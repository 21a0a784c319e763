import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Sqlite from 'better-sqlite3';
import { postgresDialect } from '../../src/storage/postgres/dialect.ts';
import { type PgDatabase, PgServer } from '../../src/storage/postgres/driver.ts';
import { type Sql, sql } from '../../src/storage/sql.ts';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';

/**
 * PostgreSQL's translation of SQLite's `strftime` (PocketBase's filter function) answers as SQLite
 * does: every case below is asked of SQLite itself (better-sqlite3, in memory) and of PostgreSQL
 * through the translation, and the answers must be the same.
 */
describe('strftime on PostgreSQL, against SQLite', { skip: skipOn('sqlite', 'the PostgreSQL translation') }, () => {
  let dir: string;
  let server: PgServer;
  let db: PgDatabase;
  const sqlite = new Sqlite(':memory:');

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-strftime-'));
    server = new PgServer({ url: await databaseUrlFor(dir), poolSize: 2, statementTimeoutMs: 10_000, connectTimeoutMs: 5000 });
    await server.start();
    db = server.database('t', 'public');
  });
  after(async () => {
    await server?.close();
    sqlite.close();
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  });

  /** SQLite's and PostgreSQL's answers for one format and modifiers over many time values at once. */
  const answers = async (format: string, values: readonly (string | number)[], modifiers: readonly string[] = []) => {
    const placeholders = ['?', '?', ...modifiers.map(() => '?')].join(', ');
    const native = sqlite.prepare(`SELECT COALESCE(strftime(${placeholders}), '') AS out`);
    const expected = values.map((v) => native.get(format, v, ...modifiers) as { out: string }).map((r) => r.out);
    const translated = postgresDialect.strftime(format, sql`x.v`, modifiers) as Sql;
    assert.ok(!('unsupported' in translated), `${modifiers.join(', ')} is translated`);
    const rows = await db.all<{ out: string }>(`SELECT ${translated.text} AS out FROM unnest(CAST(? AS text[])) WITH ORDINALITY AS x(v, n) ORDER BY x.n`, [
      ...translated.params,
      values.map(String),
    ]);
    return { expected, actual: rows.map((r) => r.out) };
  };
  const same = async (format: string, values: readonly (string | number)[], modifiers: readonly string[] = []) => {
    const { expected, actual } = await answers(format, values, modifiers);
    const call = (i: number) => `strftime(${JSON.stringify(format)}, ${JSON.stringify(values[i])}${modifiers.map((m) => `, ${JSON.stringify(m)}`).join('')})`;
    const differ = values.flatMap((_, i) => (actual[i] === expected[i] ? [] : [`${call(i)}: ${JSON.stringify(actual[i])}, SQLite ${JSON.stringify(expected[i])}`]));
    assert.deepEqual(differ, []);
  };

  // Every day of four years, each at a time of day that moves with it: the week numbers, ISO years
  // and days of the year meet every start and end of a year.
  const days: string[] = [];
  for (let ms = Date.UTC(2023, 0, 1), i = 0; ms < Date.UTC(2027, 0, 1); ms += 86_400_000, i++) {
    days.push(new Date(ms + ((i * 3_607_123) % 86_400_000)).toISOString());
  }

  test('every substitution, on every day of four years', async () => {
    for (const spec of 'dDeEfFgGHIjJklmMpPRsSTuUVwWY%'.split('')) await same(`%${spec}`, days);
    await same('%Y-%m-%d %H:%M:%S week %W/%U/%V of %G, day %j (%u, %w) at %I:%M %p %P, %e|%k|%l', days);
  });

  test('the time values SQLite reads, and what it does not', async () => {
    await same('%F %T.%f', [
      '2026-01-31',
      '2026-01-31 10:20',
      '2026-01-31 10:20:30',
      '2026-01-31T10:20:30.456',
      '2026-01-31T10:20:30.456Z',
      '2026-01-31T10:20:30z',
      '2026-01-31t10:20:30Z',
      '2026-01-31  10:20',
      '2026-01-31 10:20:30 z',
      '2026-01-31 10:20:30+0200',
      '0500-01-01 00:00',
      '2026-01-31 10:20:30.4567',
      '2026-01-31 23:30:00+02:00',
      '2026-01-31 01:30:00 -05:30',
      '2026-02-30',
      '2026-02-31 12:00',
      '10:20',
      '10:20:30.5',
      '2026-13-01',
      '2026-00-10',
      '2026-01-32',
      '2026-01-31 25:00',
      '2026-01-31 10:60',
      '2026-1-31',
      ' 2026-01-31',
      '2026-01-31 ',
      '2026-01-31Z',
      '',
      'yesterday',
      '2460000.5',
      '2460000',
      '0',
      '-1',
      '1e6',
      1700000000,
    ]);
  });

  test('numbers as Julian days, unix seconds, or either (auto)', async () => {
    const numbers = [2460000.5, 2461071.25, 0, 1700000000, 1700000000.5, -86400, 5373484.4, 99999999999999, '1700000000', 'x'];
    await same('%F %T', numbers);
    await same('%F %T', numbers, ['unixepoch']);
    await same('%F %T', numbers, ['julianday']);
    await same('%F %T', numbers, ['auto']);
    await same('%s', numbers, ['unixepoch', 'subsec']);
    // Anywhere but right after the value they make the answer NULL.
    await same('%F', ['2026-01-31', 1700000000], ['+1 day', 'unixepoch']);
  });

  test('modifiers: shifts, starts, weekdays, in sequence', async () => {
    const values = ['2024-01-31 10:20:30.250Z', '2024-02-29T23:59:59.999Z', '2025-12-31 00:00:00', '2026-03-15 12:00'];
    for (const modifiers of [
      ['+1 day'],
      ['-3 days'],
      ['+1.5 days'],
      ['+36 hours'],
      ['-90 minutes'],
      ['+3600 seconds'],
      ['+0.5 seconds'],
      ['+1 month'],
      ['-1 month'],
      ['+13 months'],
      ['+1.5 months'],
      ['-2.25 months'],
      ['+1 year'],
      ['-4 years'],
      ['+1.5 years'],
      ['1 day'],
      ['+1 DAYS'],
      ['start of month'],
      ['start of year'],
      ['start of day'],
      ['START OF MONTH'],
      ['weekday 0'],
      ['weekday 3'],
      ['weekday 6'],
      ['start of month', '+1 month', '-1 day'],
      ['start of year', 'weekday 1', '+7 days'],
      ['utc'],
      ['localtime'],
    ]) {
      await same('%F %T.%f %j %W', values, modifiers);
    }
  });

  test('formats SQLite gives NULL for are empty', async () => {
    await same('%Q', days.slice(0, 3));
    await same('%Y-%C', days.slice(0, 3));
    await same('plain text', ['2026-01-31', 'nonsense']);
  });

  test('without a time value it is now', async () => {
    const now = postgresDialect.strftime('%Y-%m-%d', undefined, []) as Sql;
    const row = await db.get<{ out: string }>(`SELECT ${now.text} AS out`, now.params);
    const today = new Date().toISOString().slice(0, 10);
    assert.equal(row?.out, today);
  });

  test('modifiers it does not translate are named', () => {
    assert.deepEqual(postgresDialect.strftime('%F', sql`'2026-01-31'`, ['+01:30']), { unsupported: '+01:30' });
    assert.deepEqual(postgresDialect.strftime('%F', sql`'2026-01-31'`, ['+1 day', 'ceiling']), { unsupported: 'ceiling' });
  });
});
