import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import type { Database } from '../../src/storage/index.ts';
import { type PgDatabase, PgServer } from '../../src/storage/postgres/driver.ts';
import { SqliteDatabase } from '../../src/storage/sqlite/driver.ts';
import { PgWireProxy } from '../helpers/pg-wire.ts';
import { databaseUrlFor, dropDatabaseFor, onPostgres, skipOn } from '../helpers/postgres.ts';

// Transaction.commitWith: a write's last statement ends its transaction (on PostgreSQL a round trip
// fewer). Both drivers: what commits and what fails; PostgreSQL: what goes over the wire.
describe('a transaction ended by its last statement (commitWith)', () => {
  let dir: string;
  let db: Database;
  let other: Database;
  let server: PgServer | undefined;
  let schemas: PgDatabase[] = [];
  let proxy: PgWireProxy | undefined;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-commit-with-'));
    if (onPostgres) {
      proxy = await PgWireProxy.start(await databaseUrlFor(dir));
      // One connection: every transaction below runs on the connection the one before left.
      server = new PgServer({ url: proxy.url, poolSize: 1, statementTimeoutMs: 5000, connectTimeoutMs: 5000 });
      await server.start();
      schemas = [server.database('one', 'one'), server.database('two', 'two')];
      [db, other] = schemas;
      await db.exec('CREATE SCHEMA IF NOT EXISTS one');
      await other.exec('CREATE SCHEMA IF NOT EXISTS two');
    } else {
      db = new SqliteDatabase('one', path.join(dir, 'one.db'));
      other = new SqliteDatabase('two', path.join(dir, 'two.db'));
    }
    for (const d of [db, other]) await d.exec('CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER NOT NULL)');
  });
  after(async () => {
    if (server) await server.close();
    else await Promise.all([db.close(), other.close()]);
    await proxy?.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });
  beforeEach(async () => {
    await db.run('DELETE FROM items');
    await other.run('DELETE FROM items');
    proxy?.reset();
  });

  const ids = async (d: Database) => (await d.all<{ id: string }>('SELECT id FROM items ORDER BY id')).map((r) => r.id);

  test('as the only statement it writes, answers its row, and the after-commit work sees the row', async () => {
    let seen: string[] = [];
    const row = await db.transaction(async (tx) => {
      tx.afterCommit(async () => {
        seen = await ids(db);
      });
      return tx.commitWith<{ id: string; n: number }>('INSERT INTO items (id, n) VALUES (?, ?) RETURNING id, n', ['a', 1]);
    });
    assert.deepEqual({ ...row }, { id: 'a', n: 1 });
    assert.deepEqual(seen, ['a']);
  });

  test('after other writes it commits them with it', async () => {
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['a', 1]);
      await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 2]);
      // A statement without rows (no RETURNING) answers undefined.
      assert.equal(await tx.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['c', 3]), undefined);
    });
    assert.deepEqual(await ids(db), ['a', 'b', 'c']);
  });

  test('when it fails, the writes before it are rolled back and the next transaction starts clean', async () => {
    await db.run('INSERT INTO items (id, n) VALUES (?, ?)', ['taken', 0]);
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['a', 1]);
        await tx.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['taken', 2]);
      }),
      (err: Error) => /unique|duplicate/i.test(err.message),
    );
    assert.deepEqual(await ids(db), ['taken']);
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 1]);
      await tx.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['c', 2]);
    });
    assert.deepEqual(await ids(db), ['b', 'c', 'taken']);
  });

  test('a statement after it fails: the transaction has ended', async () => {
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['a', 1]);
        await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 2]);
      }),
      /transaction already finished/,
    );
    assert.ok(!(await ids(db)).includes('b'));
  });

  test('inside a savepoint it is an ordinary statement: the transaction goes on, and a later failure undoes it', async () => {
    await assert.rejects(
      db.transaction(async (tx) => {
        await tx.transaction(async (inner) => {
          await inner.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['a', 1]);
        });
        await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 2]);
        assert.deepEqual((await tx.all<{ id: string }>('SELECT id FROM items ORDER BY id')).map((r) => r.id), ['a', 'b']);
        throw new Error('later failure');
      }),
      /later failure/,
    );
    assert.deepEqual(await ids(db), []);
  });

  describe('on PostgreSQL', { skip: skipOn('sqlite', 'round trips to PostgreSQL') }, () => {
    test('a transaction of that one statement sends it alone: no BEGIN, no COMMIT', async () => {
      await db.get('SELECT 1 AS warm'); // the connection's search_path is set before the log starts
      proxy!.reset();
      await db.transaction((tx) => tx.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['a', 1]));
      assert.deepEqual(proxy!.log.queries, []);
      assert.equal(proxy!.log.executes, 1);
      assert.deepEqual(await ids(db), ['a']);
    });

    test('after other statements, one BEGIN and one COMMIT: none sent after it', async () => {
      await db.get('SELECT 1 AS warm');
      proxy!.reset();
      await db.transaction(async (tx) => {
        await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['a', 1]);
        await tx.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 2]);
      });
      assert.deepEqual(proxy!.log.queries, ['BEGIN', 'COMMIT']);
      assert.equal(proxy!.log.executes, 2);
    });

    test('what it wrote stays when the transaction fails after it', async () => {
      await assert.rejects(
        db.transaction(async (tx) => {
          await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['a', 1]);
          await tx.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 2]);
          throw new Error('after the commit');
        }),
        /after the commit/,
      );
      assert.deepEqual(await ids(db), ['a', 'b']);
    });

    test("the connection's search_path is known after a commit with it and a failure after that", async () => {
      // A transaction across both schemas switches the one connection to `two` inside it (SET is
      // transactional), commits the switch with its last statement, then fails.
      await assert.rejects(
        server!.transactionAcross(schemas, async ([inOne, inTwo]) => {
          await inOne.run('INSERT INTO items (id, n) VALUES (?, ?)', ['in-one', 1]);
          await inTwo.commitWith('INSERT INTO items (id, n) VALUES (?, ?)', ['in-two', 1]);
          throw new Error('after the commit');
        }),
        /after the commit/,
      );
      // Were the switch taken for rolled back, this read would skip its SET and read schema two.
      assert.deepEqual(await ids(db), ['in-one']);
      assert.deepEqual(await ids(other), ['in-two']);
    });
  });
});
