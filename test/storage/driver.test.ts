import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import BetterSqlite3 from 'better-sqlite3';
import { sql } from '../../src/storage/index.ts';
import { SqliteDatabase } from '../../src/storage/sqlite/driver.ts';
import { skipOn } from '../helpers/postgres.ts';

// The PostgreSQL driver has its own (postgres.test.ts).
describe('SQLite driver behind the async storage interface', { skip: skipOn('postgres', 'the SQLite driver itself') }, () => {
  let dir: string;
  let db: SqliteDatabase;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-driver-'));
    db = new SqliteDatabase('t', path.join(dir, 't.db'));
    await db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)');
  });
  after(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('uses WAL and the PocketBase pragmas', async () => {
    assert.equal((await db.get<{ journal_mode: string }>('PRAGMA journal_mode'))?.journal_mode, 'wal');
    assert.equal((await db.get<{ foreign_keys: number }>('PRAGMA foreign_keys'))?.foreign_keys, 1);
  });

  test('a transaction commits when its function resolves, and after-commit work runs after that', async () => {
    const seen: number[] = [];
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO items (name) VALUES (?)', ['committed']);
      tx.afterCommit(async () => {
        // Runs after COMMIT: a reader outside the transaction sees the row.
        seen.push((await db.all('SELECT 1 FROM items WHERE name = ?', ['committed'])).length);
      });
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

  test('a nested transaction is a savepoint: its failure undoes only its own writes', async () => {
    await db.transaction(async (tx) => {
      await tx.run('INSERT INTO items (name) VALUES (?)', ['outer']);
      await assert.rejects(
        tx.transaction(async (inner) => {
          await inner.run('INSERT INTO items (name) VALUES (?)', ['inner']);
          throw new Error('inner fails');
        }),
      );
    });
    const names = (await db.all<{ name: string }>("SELECT name FROM items WHERE name IN ('outer', 'inner')")).map((r) => r.name);
    assert.deepEqual(names, ['outer']);
  });

  test('concurrent transactions run one after the other, in order', async () => {
    const order: string[] = [];
    const slow = db.transaction(async (tx) => {
      order.push('a:start');
      await new Promise((resolve) => setImmediate(resolve));
      await tx.run('INSERT INTO items (name) VALUES (?)', ['a']);
      order.push('a:end');
    });
    const fast = db.transaction(async (tx) => {
      order.push('b:start');
      await tx.run('INSERT INTO items (name) VALUES (?)', ['b']);
      order.push('b:end');
    });
    await Promise.all([slow, fast]);
    assert.deepEqual(order, ['a:start', 'a:end', 'b:start', 'b:end']);
  });

  test('transactions of one event loop turn share a commit, and each resolves only once it is durable', async () => {
    const wal = () => statSync(`${db.file}-wal`).size;
    await db.run('INSERT INTO items (name) VALUES (?)', ['before-group']);
    const before = wal();
    const visible: number[] = [];
    await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        db
          .transaction(async (tx) => {
            await tx.run('INSERT INTO items (name) VALUES (?)', [`grouped-${i}`]);
          })
          // Resolved: a reader outside the transaction sees it, so it has committed.
          .then(async () => visible.push((await db.all('SELECT 1 FROM items WHERE name = ?', [`grouped-${i}`])).length)),
      ),
    );
    assert.deepEqual(visible, Array(20).fill(1));
    // Committed one by one, 20 commits would each write the table's last page and the name index's
    // page (40 frames or more); together, a handful.
    const frames = (wal() - before) / (4096 + 24);
    assert.ok(frames < 10, `20 small transactions wrote ${frames} WAL frames`);
  });

  test('a failing transaction in a group undoes only its own writes', async () => {
    const results = await Promise.allSettled(
      ['first', 'failing', 'third', 'first'].map((name) =>
        db.transaction(async (tx) => {
          await tx.run('INSERT INTO items (name) VALUES (?)', [`g-${name}`]);
          if (name === 'failing') throw new Error('boom');
        }),
      ),
    );
    // The second `first` breaks the unique name: it fails alone too.
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'rejected', 'fulfilled', 'rejected'],
    );
    const names = (await db.all<{ name: string }>("SELECT name FROM items WHERE name LIKE 'g-%' ORDER BY name")).map((r) => r.name);
    assert.deepEqual(names, ['g-first', 'g-third']);
  });

  test('a plain write while a group is open commits the group first', async () => {
    const grouped = db.transaction(async (tx) => {
      await tx.run('INSERT INTO items (name) VALUES (?)', ['open-group']);
    });
    // The transaction has run (its microtasks are done) but its group waits for the turn to end.
    await Promise.resolve();
    await db.run('INSERT INTO items (name) VALUES (?)', ['plain-write']);
    assert.equal((await db.all("SELECT 1 FROM items WHERE name IN ('open-group', 'plain-write')")).length, 2);
    await grouped;
  });

  test("reads of one turn share a snapshot, which every commit of this process ends, and another process's commit shows by the next turn", async () => {
    await db.run('INSERT INTO items (name) VALUES (?)', ['snap']);
    const nameOf = async () => (await db.get<{ name: string }>("SELECT name FROM items WHERE name LIKE 'snap%'"))?.name;
    assert.equal(await nameOf(), 'snap');
    // In the same turn: a group commit and a plain write are seen by the very next read.
    await db.transaction(async (tx) => {
      await tx.run("UPDATE items SET name = 'snap-tx' WHERE name = 'snap'");
    });
    assert.equal(await nameOf(), 'snap-tx');
    await db.run("UPDATE items SET name = 'snap-run' WHERE name = 'snap-tx'");
    assert.equal(await nameOf(), 'snap-run');

    // Another connection (the CLI, say) commits while this turn's snapshot is open.
    const other = new BetterSqlite3(path.join(dir, 't.db'));
    try {
      assert.equal(await nameOf(), 'snap-run');
      other.prepare("UPDATE items SET name = 'snap-other' WHERE name = 'snap-run'").run();
      await new Promise((resolve) => setImmediate(resolve));
      assert.equal(await nameOf(), 'snap-other');
    } finally {
      other.close();
    }
  });

  test('a statement on a finished transaction handle is refused instead of running unlocked', async () => {
    let leaked: Parameters<Parameters<typeof db.transaction>[0]>[0] | undefined;
    await db.transaction(async (tx) => {
      leaked = tx;
    });
    await assert.rejects(leaked!.run('INSERT INTO items (name) VALUES (?)', ['late']), /finished/);
  });

  test('a unique violation is classified with its table and column', async () => {
    const err = await db.run('INSERT INTO items (name) VALUES (?)', ['a']).catch((e: unknown) => e);
    assert.deepEqual(db.dialect.classifyError(err), { kind: 'unique', table: 'items', columns: ['name'] });
  });

  test('the sql tag turns every value into a parameter', async () => {
    const hostile = "x'); DROP TABLE items; --";
    const q = sql`SELECT name FROM items WHERE name = ${hostile}`;
    assert.equal(q.text, 'SELECT name FROM items WHERE name = ?');
    assert.deepEqual(q.params, [hostile]);
    assert.deepEqual(await db.all(q.text, q.params), []);
    assert.ok((await db.all('SELECT 1 FROM items')).length > 0);
  });
});
