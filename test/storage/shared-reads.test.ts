import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PgServer } from '../../src/storage/postgres/driver.ts';
import { withinTransaction } from '../../src/storage/within.ts';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';
import { waitFor } from '../helpers/wait.ts';

const ROWS = 200;

describe('reads by key share connections (Database.lookup on PostgreSQL)', { skip: skipOn('sqlite', 'the PostgreSQL driver pipelines lookups') }, () => {
  let dir: string;
  let url: string;
  let server: PgServer;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-shared-reads-'));
    url = await databaseUrlFor(dir);
    server = new PgServer({ url, poolSize: 8, statementTimeoutMs: 5000, connectTimeoutMs: 5000 });
    await server.start();
    // Two databases (schemas) with the same table and ids and different values.
    for (const schema of ['one', 'two']) {
      const db = server.database(schema, schema);
      await db.exec(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await db.exec('CREATE TABLE items (id TEXT PRIMARY KEY, owner TEXT NOT NULL)');
      await db.transaction(async (tx) => {
        for (let i = 0; i < ROWS; i++) await tx.run('INSERT INTO items (id, owner) VALUES (?, ?)', [`i${i}`, `${schema}-${i}`]);
      });
    }
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  });

  /** Waits until `schema`'s lane is open (the first lookups run on connections of their own meanwhile). */
  async function laneReady(schema: string): Promise<void> {
    const db = server.database(schema, schema);
    await db.lookup('SELECT 1 AS one');
    await waitFor(() => server.shared.run(schema, 'SELECT 1 AS one', undefined)?.then(() => true), { what: `the lane of ${schema}` });
  }

  const lookup = (schema: string, i: number) => server.database(schema, schema).lookup<{ id: string; owner: string }>('SELECT id, owner FROM items WHERE id = ?', [`i${i}`]);

  test('concurrent lookups of two databases each get their own row, on one connection per database', async () => {
    await laneReady('one');
    await laneReady('two');
    const before = server.pool.totalCount;
    // Interleaved: a read of one database follows a read of the other on every step.
    const reads = Array.from({ length: 60 }, (_, n) => lookup(n % 2 === 0 ? 'one' : 'two', n));
    const rows = await Promise.all(reads);
    rows.forEach((row, n) => assert.deepEqual({ ...row }, { id: `i${n}`, owner: `${n % 2 === 0 ? 'one' : 'two'}-${n}` }));
    // Sixty reads at once on connections of their own would have opened the whole pool.
    assert.equal(server.pool.totalCount, before, 'no connection opened for the burst');
  });

  test('past the lane\'s depth, reads take connections of their own, and every one is answered', async () => {
    await laneReady('one');
    const rows = await Promise.all(Array.from({ length: ROWS }, (_, i) => lookup('one', i)));
    assert.deepEqual(rows.map((r) => r?.owner), Array.from({ length: ROWS }, (_, i) => `one-${i}`));
    assert.ok(server.pool.totalCount > 3, `the overflow used the pool (${server.pool.totalCount} connections)`);
  });

  test('the same read asked again in one turn is sent once, each caller gets a row of its own, and a later turn reads again', async () => {
    await laneReady('one');
    const db = server.database('one', 'one');
    await db.exec('CREATE SEQUENCE IF NOT EXISTS reads');
    // Each run of the statement takes the next number: callers that share a run share a number.
    const counted = (id: string) => db.lookup<{ owner: string; run: string }>('SELECT owner, nextval(\'reads\') AS run FROM items WHERE id = ?', [id]);
    const same = await Promise.all([counted('i4'), counted('i4'), counted('i4'), counted('i5')]);
    assert.deepEqual(same.map((r) => r?.owner), ['one-4', 'one-4', 'one-4', 'one-5']);
    assert.equal(new Set(same.slice(0, 3).map((r) => r?.run)).size, 1, 'one run for the three asks of i4');
    assert.notEqual(same[3]?.run, same[0]?.run, 'another id is another read');
    same[0]!.owner = 'mutated by one caller';
    assert.equal(same[1]?.owner, 'one-4');
    // A write committed between two turns is seen by the next read of the same key.
    await db.run('UPDATE items SET owner = ? WHERE id = ?', ['changed-4', 'i4']);
    const later = await counted('i4');
    assert.equal(later?.owner, 'changed-4');
    assert.notEqual(later?.run, same[0]?.run);
    await db.run('UPDATE items SET owner = ? WHERE id = ?', ['one-4', 'i4']);
  });

  test('a failed read fails alone; a missing row is undefined', async () => {
    await laneReady('one');
    const db = server.database('one', 'one');
    const [bad, missing, good] = await Promise.allSettled([db.lookup('SELECT nope FROM items WHERE id = ?', ['i1']), lookup('one', ROWS + 5), lookup('one', 7)]);
    assert.equal(bad.status, 'rejected');
    assert.deepEqual(missing, { status: 'fulfilled', value: undefined });
    assert.equal(good.status === 'fulfilled' && good.value?.owner, 'one-7');
  });

  test('a lane whose connection is killed is replaced, and lookups go on', async () => {
    await laneReady('two');
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      // Every connection of the pool, the lane's among them.
      await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = 'cairn'");
    } finally {
      await admin.end();
    }
    await waitFor(
      async () => {
        const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => lookup('two', i)));
        return results.every((r, i) => r.status === 'fulfilled' && r.value?.owner === `two-${i}`);
      },
      { timeoutMs: 10_000, what: 'lookups to succeed again' },
    );
    await laneReady('two');
    assert.equal((await lookup('two', 3))?.owner, 'two-3');
  });

  test('inside a transaction a lookup runs in it and sees its uncommitted writes', async () => {
    const db = server.database('one', 'one');
    await db.transaction(async (tx) => {
      await tx.run('UPDATE items SET owner = ? WHERE id = ?', ['changed', 'i9']);
      const inside = await withinTransaction(db, tx).lookup<{ owner: string }>('SELECT owner FROM items WHERE id = ?', ['i9']);
      assert.equal(inside?.owner, 'changed');
      assert.equal((await lookup('one', 9))?.owner, 'one-9', 'outside, the committed value');
      throw new Error('roll back');
    }).catch((err: Error) => assert.equal(err.message, 'roll back'));
  });

  test('closing the server gives the lanes back: close ends', async () => {
    const other = new PgServer({ url, poolSize: 4, statementTimeoutMs: 5000, connectTimeoutMs: 5000 });
    await other.start();
    const db = other.database('one', 'one');
    await db.lookup('SELECT 1 AS one');
    await waitFor(() => other.shared.run('one', 'SELECT 1 AS one', undefined)?.then(() => true), { what: 'the lane' });
    await other.close();
    assert.equal(other.pool.totalCount, 0);
  });
});
