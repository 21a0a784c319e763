import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { ApiError } from '../../src/errors.ts';
import { StorageStartError } from '../../src/storage/backend.ts';
import { sql } from '../../src/storage/index.ts';
import { PostgresBackend } from '../../src/storage/postgres/backend.ts';
import type { Database } from '../../src/storage/types.ts';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';
import { freePort } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

// The SQLite driver has its own (driver.test.ts). Its database is named after this key, as a test
// data directory's would be.
const KEY = `postgres-driver-test-${process.pid}`;

function backendOn(url: string, options: { statementTimeoutMs?: number } = {}): PostgresBackend {
  return new PostgresBackend({ url, poolSize: 2, statementTimeoutMs: options.statementTimeoutMs ?? 30_000, connectTimeoutMs: 5_000 });
}

describe('PostgreSQL driver behind the async storage interface', { skip: skipOn('sqlite', 'the PostgreSQL driver itself') }, () => {
  let url: string;
  let backend: PostgresBackend;
  let db: Database;
  before(async () => {
    url = await databaseUrlFor(KEY);
    backend = backendOn(url);
    await backend.openSystem();
    db = await backend.create('t');
    await db.exec('CREATE TABLE items (id SERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE)');
  });
  after(async () => {
    await backend?.close();
    await dropDatabaseFor(KEY);
  });

  test('a transaction commits when its function resolves, and after-commit work runs after that', async () => {
    const seen: number[] = [];
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO items (name) VALUES (?)', ['committed']);
      tx.afterCommit(async () => {
        // Runs after COMMIT: a statement on another connection sees the row.
        seen.push((await db.all('SELECT 1 FROM items WHERE name = ?', ['committed'])).length);
      });
      // Not yet committed: another connection does not see it.
      assert.equal((await db.all('SELECT 1 FROM items WHERE name = ?', ['committed'])).length, 0);
    });
    assert.deepEqual(seen, [1]);
  });

  test('a rejected transaction rolls back and drops its after-commit work', async () => {
    let ran = false;
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO items (name) VALUES (?)', ['rolled-back']);
        tx.afterCommit(() => {
          ran = true;
        });
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(ran, false);
    assert.equal((await db.all('SELECT 1 FROM items WHERE name = ?', ['rolled-back'])).length, 0);
  });

  test('a nested transaction is a savepoint: its failure undoes only its own writes and after-commit work', async () => {
    const ran: string[] = [];
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO items (name) VALUES (?)', ['outer']);
      tx.afterCommit(() => void ran.push('outer'));
      await assert.rejects(
        tx.transaction(async (inner) => {
          await inner.run('INSERT INTO items (name) VALUES (?)', ['inner']);
          inner.afterCommit(() => void ran.push('inner'));
          // A failed statement aborts a PostgreSQL transaction; the savepoint must bring it back.
          await inner.run('INSERT INTO items (name) VALUES (?)', ['outer']);
        }),
      );
      await tx.run('INSERT INTO items (name) VALUES (?)', ['after-inner']);
    });
    const names = (await db.all<{ name: string }>("SELECT name FROM items WHERE name IN ('outer', 'inner', 'after-inner') ORDER BY id")).map((r) => r.name);
    assert.deepEqual(names, ['outer', 'after-inner']);
    assert.deepEqual(ran, ['outer']);
  });

  test('a statement on a finished transaction handle is refused', async () => {
    let leaked: Parameters<Parameters<typeof db.transaction>[0]>[0] | undefined;
    await db.transaction(async (tx) => {
      leaked = tx;
    });
    await assert.rejects(leaked!.run('INSERT INTO items (name) VALUES (?)', ['late']), /finished/);
    assert.equal((await db.all('SELECT 1 FROM items WHERE name = ?', ['late'])).length, 0);
  });

  test('a unique violation is classified with its table and column', async () => {
    await db.run('INSERT INTO items (name) VALUES (?)', ['unique-a']);
    const err = await db.run('INSERT INTO items (name) VALUES (?)', ['unique-a']).catch((e: unknown) => e);
    assert.deepEqual(db.dialect.classifyError(err), { kind: 'unique', table: 'items', columns: ['name'] });
  });

  test('placeholders become numbered parameters, and a ? inside quotes stays text', async () => {
    const hostile = "x'); DROP TABLE items; --";
    const q = sql`SELECT name FROM items WHERE name = ${hostile}`;
    assert.deepEqual(await db.all(q.text, q.params), []);
    assert.ok((await db.all('SELECT 1 FROM items')).length > 0);
    const row = await db.get<{ q: string; a: string; b: number }>("SELECT '?' AS q, ? AS a, ?::int + 1 AS b", ['first', 41]);
    assert.deepEqual(row, { q: '?', a: 'first', b: 42 });
  });

  test('unquoted mixed-case names keep their case, as on SQLite; quoted text is left alone', async () => {
    await db.exec('CREATE TABLE people (id TEXT PRIMARY KEY, passwordHash TEXT, lower_name TEXT)');
    await db.run('INSERT INTO people (id, passwordHash, lower_name) VALUES (?, ?, ?)', ['p1', 'hash', 'camelCase']);
    const columns = (await db.dialect.tableColumns(db, 'people')).map((c) => c.name);
    assert.deepEqual(columns, ['id', 'passwordHash', 'lower_name']);
    assert.deepEqual(await db.get('SELECT passwordHash, lower_name FROM people WHERE lower_name = ?', ['camelCase']), { passwordHash: 'hash', lower_name: 'camelCase' });
  });

  test('rows read as on SQLite: booleans as 1/0, counts as numbers, JSON as its text', async () => {
    const row = await db.get('SELECT TRUE AS yes, FALSE AS no, COUNT(*) AS n, \'{"a": [1]}\'::jsonb AS j FROM items');
    assert.equal(row!.yes, 1);
    assert.equal(row!.no, 0);
    assert.equal(typeof row!.n, 'number');
    assert.deepEqual(JSON.parse(row!.j as string), { a: [1] });
    // And booleans are bound as 1/0, which a boolean column takes too.
    await db.exec('CREATE TABLE flags (id TEXT PRIMARY KEY, on_ boolean NOT NULL)');
    await db.run('INSERT INTO flags (id, on_) VALUES (?, ?), (?, ?)', ['a', true, 'b', false]);
    assert.deepEqual(await db.all('SELECT id, on_ FROM flags ORDER BY id'), [
      { id: 'a', on_: 1 },
      { id: 'b', on_: 0 },
    ]);
  });

  test('a statement running past the timeout is a 503, and the pool goes on', async () => {
    const slow = backendOn(url, { statementTimeoutMs: 200 });
    try {
      await slow.openSystem();
      const t = await slow.open('t');
      const err = await t!.get('SELECT pg_sleep(5)').catch((e: unknown) => e);
      assert.ok(err instanceof ApiError, String(err));
      assert.equal(err.status, 503);
      assert.equal((await t!.get<{ n: number }>('SELECT 1 AS n'))?.n, 1);
    } finally {
      await slow.close();
    }
  });

  test('a connection lost mid-statement is a 503 for that statement, and the next one works', async () => {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      const running = db.get('SELECT pg_sleep(10), 1 AS n').catch((e: unknown) => e);
      // The server's process for that statement, ended as a restart or a network cut would.
      const pid = await waitFor(async () => {
        const r = await admin.query("SELECT pid FROM pg_stat_activity WHERE query LIKE 'SELECT pg_sleep(10)%' AND pid <> pg_backend_pid()");
        return r.rows[0]?.pid as number | undefined;
      });
      await admin.query('SELECT pg_terminate_backend($1)', [pid]);
      const err = await running;
      assert.ok(err instanceof ApiError, String(err));
      assert.equal(err.status, 503);
      for (let i = 0; i < 4; i++) assert.equal((await db.get<{ n: number }>('SELECT 1 AS n'))?.n, 1);
    } finally {
      await admin.end();
    }
  });

  test('an unreachable server or a missing database fails start-up with one line naming it, without the password', async () => {
    const closed = await freePort();
    const missing = new URL(url);
    missing.pathname = `${missing.pathname}_missing`;
    missing.password = 'hunter2secret';
    for (const bad of [`postgres://cairn:hunter2secret@127.0.0.1:${closed}/nothing`, missing.toString()]) {
      const b = backendOn(bad);
      const err = await b.openSystem().catch((e: unknown) => e);
      await b.close();
      assert.ok(err instanceof StorageStartError, String(err));
      assert.match(err.message, /^cannot use PostgreSQL at postgres:\/\/[^\n]+$/);
      assert.doesNotMatch(err.message, /hunter2secret/);
    }
  });
});
