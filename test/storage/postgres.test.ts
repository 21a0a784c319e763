import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { isApiError } from '../../src/errors.ts';
import { PostgresBackend } from '../../src/storage/postgres/backend.ts';
import { PgServer } from '../../src/storage/postgres/driver.ts';
import { PgNotifier } from '../../src/storage/postgres/notifier.ts';
import { toPostgres } from '../../src/storage/postgres/placeholders.ts';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { keepAliveDue } from '../helpers/tcp.ts';
import { waitFor } from '../helpers/wait.ts';

describe('the PostgreSQL driver', { skip: skipOn('sqlite', 'PostgreSQL driver behaviour') }, () => {
  let dir: string;
  let url: string;
  let server: PgServer;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-pg-driver-'));
    url = await databaseUrlFor(dir);
    server = new PgServer({ url, poolSize: 2, statementTimeoutMs: 300, connectTimeoutMs: 2000 });
    await server.start();
    const db = server.database('t', 't');
    await db.exec('CREATE SCHEMA IF NOT EXISTS t; CREATE SCHEMA IF NOT EXISTS u');
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  });

  test('requests beyond the pool wait their turn; past the queue limit one is a 503 at once', async () => {
    const small = new PgServer({ url, poolSize: 2, statementTimeoutMs: 5000, connectTimeoutMs: 60_000, queueLimit: 4 });
    try {
      const db = small.database('t', 't');
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      // Both connections busy until released.
      const holders = [0, 1].map(() => small.transactionAcross([db], async ([tx]) => {
        await tx.get('SELECT 1 AS one');
        await held;
      }));
      const deadline = Date.now() + 10_000;
      while (small.pool.totalCount < 2 || small.pool.idleCount > 0) {
        assert.ok(Date.now() < deadline, 'the holders took both connections');
        await new Promise((r) => setImmediate(r));
      }
      const waiting = [1, 2, 3, 4].map((n) => db.get<{ n: number }>('SELECT ?::int AS n', [n]));
      while (small.pool.waitingCount < 4) {
        assert.ok(Date.now() < deadline, 'four requests queued');
        await new Promise((r) => setImmediate(r));
      }
      await assert.rejects(db.get('SELECT 1'), (err: unknown) => isApiError(err) && err.status === 503 && /waiting/.test(err.message));
      release();
      await Promise.all(holders);
      assert.deepEqual((await Promise.all(waiting)).map((r) => r?.n), [1, 2, 3, 4], 'the queued requests are served, none failed');
    } finally {
      await small.close();
    }
  });

  test('the kept connections are opened at start, before any request asks; without them one is', async () => {
    const pool = async (minConnections: number) => {
      const server = new PgServer({ url, poolSize: 3, minConnections, statementTimeoutMs: 5000, connectTimeoutMs: 10_000 });
      await server.start();
      return server;
    };
    const kept = await pool(3);
    const lazy = await pool(0);
    try {
      await waitFor(() => kept.pool.totalCount === 3 && kept.pool.idleCount === 3, { what: 'three idle connections' });
      // Real connections: PostgreSQL serves each (they answer one after the other with none left to open).
      const pids = new Set<number>();
      const db = kept.database('t', 't');
      const clients = await Promise.all([0, 1, 2].map(() => kept.pool.connect()));
      for (const c of clients) pids.add((await c.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0].pid);
      for (const c of clients) c.release();
      assert.equal(pids.size, 3);
      assert.equal(kept.pool.totalCount, 3, 'no connection was opened for them');
      assert.deepEqual(await db.get('SELECT 1 AS one'), { one: 1 });
      // The start's own connection, left idle: nothing more opened.
      assert.equal(lazy.pool.totalCount, 1);
    } finally {
      await kept.close();
      await lazy.close();
    }
  });

  test('connections left idle, pooled or listening, send TCP keepalive probes after 30 s', { skip: process.platform !== 'linux' && 'reads /proc/net/tcp' }, async () => {
    const localPort = (client: unknown) => (client as { connection: { stream: { localPort: number } } }).connection.stream.localPort;
    const kept = new PgServer({ url, poolSize: 2, minConnections: 2, statementTimeoutMs: 5000, connectTimeoutMs: 10_000 });
    const notifier = new PgNotifier(url, 'keepalive-test');
    try {
      await kept.start();
      const clients = await Promise.all([kept.pool.connect(), kept.pool.connect()]);
      const ports = clients.map(localPort);
      for (const c of clients) c.release();
      notifier.listen('cairn_keepalive_test', () => {});
      await notifier.ready();
      ports.push(localPort((notifier as unknown as { client: unknown }).client));
      // Probes after 30 s idle, not the operating system's default of two hours.
      for (const due of keepAliveDue(ports)) assert.ok(due !== undefined && due <= 30, `keepalive due in ${due} s`);
    } finally {
      await kept.close();
      await notifier.close();
    }
  });

  test('placeholders are numbered outside quotes; mixed-case names keep their case', () => {
    assert.equal(toPostgres(`SELECT passwordHash, 'a?b' AS "q?", x FROM t WHERE a = ? AND b = ?`, true), `SELECT "passwordHash", 'a?b' AS "q?", x FROM t WHERE a = $1 AND b = $2`);
    assert.equal(toPostgres('SELECT data ? \'key\' FROM t', false), `SELECT data ? 'key' FROM t`);
    assert.equal(toPostgres("SELECT $fn$ a?B $fn$, 1e5 -- c?Dd\n", true), "SELECT $fn$ a?B $fn$, 1e5 -- c?Dd\n");
  });

  test('each database is its schema; one transaction can span several and rolls back as one', async () => {
    const t = server.database('t', 't');
    const u = server.database('u', 'u');
    await t.exec('CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER)');
    await u.exec('CREATE TABLE items (id TEXT PRIMARY KEY, n INTEGER)');
    await t.run('INSERT INTO items (id, n) VALUES (?, ?)', ['a', 1]);
    assert.equal((await u.get<{ c: number }>('SELECT COUNT(*) AS c FROM items'))!.c, 0, 'u has its own table');
    await assert.rejects(
      server.transactionAcross([t, u], async ([tx, ux]) => {
        await tx.run('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 2]);
        await ux.run('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 2]);
        await ux.run('INSERT INTO items (id, n) VALUES (?, ?)', ['b', 3]);
      }),
    );
    assert.equal((await t.get<{ c: number }>('SELECT COUNT(*) AS c FROM items'))!.c, 1);
    assert.equal((await u.get<{ c: number }>('SELECT COUNT(*) AS c FROM items'))!.c, 0);
    // After the rollback the connection reads its schema right again.
    assert.deepEqual(await t.all('SELECT id FROM items'), [{ id: 'a' }]);
  });

  test('a unique violation names its columns; savepoints undo only their part; after-commit runs once, not for rollbacks', async () => {
    const t = server.database('t', 't');
    await t.exec('CREATE TABLE people (id TEXT PRIMARY KEY, "emailAddress" TEXT UNIQUE)');
    await t.run('INSERT INTO people (id, emailAddress) VALUES (?, ?)', ['1', 'a@x']);
    const err = await t.run('INSERT INTO people (id, emailAddress) VALUES (?, ?)', ['2', 'a@x']).catch((e) => e);
    assert.deepEqual(t.dialect.classifyError(err), { kind: 'unique', table: 'people', columns: ['emailAddress'] });
    const calls: string[] = [];
    await t.transaction(async (tx) => {
      await tx.run('INSERT INTO people (id, emailAddress) VALUES (?, ?)', ['3', 'c@x']);
      tx.afterCommit(() => void calls.push('outer'));
      await tx
        .transaction(async (inner) => {
          inner.afterCommit(() => void calls.push('inner'));
          await inner.run('INSERT INTO people (id, emailAddress) VALUES (?, ?)', ['4', 'a@x']);
        })
        .catch(() => undefined);
    });
    assert.deepEqual(calls, ['outer']);
    assert.deepEqual((await t.all<{ id: string }>('SELECT id FROM people ORDER BY id')).map((r) => r.id), ['1', '3']);
  });

  test('a statement running past the timeout is cancelled: 503, and the pool goes on', async () => {
    const t = server.database('t', 't');
    const err = await t.get('SELECT pg_sleep(5)').catch((e) => e);
    assert.ok(isApiError(err) && err.status === 503, String(err));
    assert.deepEqual(await t.get('SELECT 1 AS one'), { one: 1 });
  });

  test('a connection lost in the middle of a request is a 503 for it; the next request gets a new connection', async () => {
    const t = server.database('t', 't');
    const running = t.get('SELECT pg_sleep(0.25), 1 AS one').catch((e) => e);
    const killer = new pg.Client({ connectionString: url });
    await killer.connect();
    try {
      // Terminate the backend running the sleep.
      for (let i = 0; i < 50; i++) {
        const killed = await killer.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'cairn' AND query LIKE 'SELECT pg_sleep(0.25)%'");
        if (killed.rowCount) break;
        await new Promise((r) => setTimeout(r, 5));
      }
    } finally {
      await killer.end();
    }
    const err = await running;
    assert.ok(isApiError(err) && err.status === 503, String(err));
    assert.deepEqual(await t.get('SELECT 1 AS one'), { one: 1 });
  });

  test('a wrong or unreachable URL stops start-up with one clear line', async () => {
    for (const bad of ['postgres://postgres@127.0.0.1:1/cairn', `postgres://postgres@127.0.0.1:5432/no_such_database_${Date.now()}`]) {
      // CAIRN_DB_WAIT_MS=0: no wait for a database that might still be starting (test/cli/db-wait).
      const res = await runCli(['serve', '--dir', path.join(dir, 'bad'), '--port', '0'], { CAIRN_DATABASE_URL: bad, CAIRN_DB_WAIT_MS: '0' }, 30_000);
      assert.equal(res.code, 1, res.stderr);
      const lines = res.stderr.trim().split('\n');
      assert.equal(lines.length, 1, res.stderr);
      assert.match(lines[0], /^cairn: cannot use PostgreSQL at postgres:\/\/postgres@127\.0\.0\.1/);
      assert.doesNotMatch(res.stderr, /\n\s+at /, 'no stack trace');
    }
    const notUrl = await runCli(['serve', '--dir', path.join(dir, 'bad')], { CAIRN_DATABASE_URL: 'mysql://x' }, 30_000);
    assert.equal(notUrl.code, 2);
    assert.match(notUrl.stderr, /CAIRN_DATABASE_URL must be a PostgreSQL URL/);
  });

  test('a transaction is seen by other connections once committed, and after-commit work runs after that; a rejected one leaves nothing', async () => {
    const t = server.database('t', 't');
    await t.exec('CREATE TABLE ledger (id SERIAL PRIMARY KEY, name TEXT NOT NULL UNIQUE)');
    const seen: number[] = [];
    await t.transaction(async (tx) => {
      await tx.run('INSERT INTO ledger (name) VALUES (?)', ['committed']);
      // Not committed yet: a statement outside the transaction (another connection) does not see it.
      assert.equal((await t.all('SELECT 1 FROM ledger WHERE name = ?', ['committed'])).length, 0);
      tx.afterCommit(async () => void seen.push((await t.all('SELECT 1 FROM ledger WHERE name = ?', ['committed'])).length));
    });
    assert.deepEqual(seen, [1]);

    let ran = false;
    await assert.rejects(
      t.transaction(async (tx) => {
        await tx.run('INSERT INTO ledger (name) VALUES (?)', ['rolled-back']);
        tx.afterCommit(() => void (ran = true));
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.equal(ran, false);
    assert.equal((await t.all('SELECT 1 FROM ledger WHERE name = ?', ['rolled-back'])).length, 0);
  });

  test('after a failed statement in a savepoint the transaction goes on; a finished transaction handle is refused', async () => {
    const t = server.database('t', 't');
    let leaked: Parameters<Parameters<typeof t.transaction>[0]>[0] | undefined;
    await t.transaction(async (tx) => {
      leaked = tx;
      await tx.run('INSERT INTO ledger (name) VALUES (?)', ['outer']);
      // The duplicate aborts PostgreSQL's transaction; only the savepoint's rollback brings it back.
      await assert.rejects(tx.transaction((inner) => inner.run('INSERT INTO ledger (name) VALUES (?)', ['outer'])));
      await tx.run('INSERT INTO ledger (name) VALUES (?)', ['after-inner']);
    });
    assert.deepEqual((await t.all<{ name: string }>("SELECT name FROM ledger WHERE name IN ('outer', 'after-inner') ORDER BY id")).map((r) => r.name), ['outer', 'after-inner']);
    await assert.rejects(leaked!.run('INSERT INTO ledger (name) VALUES (?)', ['late']), /finished/);
    assert.equal((await t.all('SELECT 1 FROM ledger WHERE name = ?', ['late'])).length, 0);
  });

  test('rows read as on SQLite: booleans 1/0, counts numbers, JSON its text; booleans bind as 1/0; a ? in quotes stays text', async () => {
    const t = server.database('t', 't');
    const row = await t.get<Record<string, unknown>>('SELECT TRUE AS yes, FALSE AS no, COUNT(*) AS n, \'{"a": [1]}\'::jsonb AS j, \'?\' AS q, ?::int + 1 AS b FROM ledger', [41]);
    // committed, outer, after-inner
    assert.deepEqual(row, { yes: 1, no: 0, n: 3, j: '{"a": [1]}', q: '?', b: 42 });
    await t.exec('CREATE TABLE flags (id TEXT PRIMARY KEY, up boolean NOT NULL)');
    await t.run('INSERT INTO flags (id, up) VALUES (?, ?), (?, ?)', ['a', true, 'b', false]);
    assert.deepEqual(await t.all('SELECT id, up FROM flags ORDER BY id'), [
      { id: 'a', up: 1 },
      { id: 'b', up: 0 },
    ]);
  });

  test('unquoted mixed-case names in DDL keep their case; table columns leave out the hidden ones', async () => {
    const t = server.database('t', 't');
    await t.exec('CREATE TABLE mixed (id TEXT PRIMARY KEY, tokenKey TEXT, lower_name TEXT, "_seq" bigint GENERATED BY DEFAULT AS IDENTITY)');
    await t.run('INSERT INTO mixed (id, tokenKey, lower_name) VALUES (?, ?, ?)', ['m1', 'key', 'camelCase']);
    assert.deepEqual((await t.dialect.tableColumns(t, 'mixed')).map((c) => c.name), ['id', 'tokenKey', 'lower_name']);
    assert.deepEqual(await t.get('SELECT tokenKey, lower_name FROM mixed WHERE lower_name = ?', ['camelCase']), { tokenKey: 'key', lower_name: 'camelCase' });
  });

  test('nodes creating one new database at once all succeed (its schema is made once)', async () => {
    // Each backend is a node of its own, with its own pool: PostgreSQL's CREATE SCHEMA IF NOT EXISTS
    // alone let concurrent creators fail on pg_namespace's unique index.
    const nodes = Array.from({ length: 6 }, () => new PostgresBackend({ url, poolSize: 2, statementTimeoutMs: 5000, connectTimeoutMs: 10_000 }));
    try {
      await Promise.all(nodes.map((n) => n.server.start()));
      for (let round = 0; round < 3; round++) {
        const name = `racing_${round}`;
        const outcomes = await Promise.allSettled(nodes.map((n) => n.create(name)));
        assert.deepEqual(outcomes.map((o) => o.status), nodes.map(() => 'fulfilled'), String(outcomes.find((o) => o.status === 'rejected')?.reason ?? ''));
        const { rows } = await nodes[0].server.pool.query('SELECT count(*)::int AS n FROM pg_namespace WHERE nspname = $1', [name]);
        assert.equal(rows[0].n, 1);
      }
    } finally {
      await Promise.all(nodes.map((n) => n.server.close()));
    }
  });
});
