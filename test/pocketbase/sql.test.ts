import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

describe('SQL console (POST /api/sql)', () => {
  let server: TestServer;
  let userToken: string;
  before(async () => {
    server = await startServer();
    await server.admin('POST', '/api/collections/users/records', {
      body: { email: 'ann@example.com', password: 'password-123', passwordConfirm: 'password-123' },
    });
    const login = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'ann@example.com', password: 'password-123' } });
    userToken = login.body.token;
  });
  after(() => server.close());

  const sql = (query: unknown, token: string | null = server.adminToken) => server.request('POST', '/api/sql', { body: { query }, token });

  test('only a superuser may run SQL: a guest gets 401, a user 403', async () => {
    assert.equal((await sql('select 1', null)).status, 401);
    const user = await sql('select 1', userToken);
    assert.equal(user.status, 403);
    assert.deepEqual(user.body.data, {});
  });

  test('a read answers its columns and rows, values as text, null kept', async () => {
    const res = await sql("select 7 as seven, 'x' as letter, null as absent");
    assert.equal(res.status, 200);
    assert.equal(res.body.affectedRows, 0);
    assert.equal(typeof res.body.execTime, 'number');
    assert.deepEqual(
      res.body.columns.map((c: { name: string }) => c.name),
      ['seven', 'letter', 'absent'],
    );
    assert.deepEqual(res.body.rows, [['7', 'x', null]]);
  });

  test('several statements run in order and the last one is answered', async () => {
    const res = await sql('create table console_a(id integer primary key, label text); insert into console_a(id, label) values (1, \'one;two\'), (2, \'b\'); select label from console_a order by id');
    assert.equal(res.status, 200);
    assert.equal(res.body.affectedRows, 2);
    assert.deepEqual(res.body.rows, [['one;two'], ['b']]);
    assert.deepEqual(res.body.columns.map((c: { name: string }) => c.name), ['label']);
  });

  test('a failing statement undoes the ones before it and answers the database error', async () => {
    const res = await sql('create table console_b(id integer primary key); insert into console_b(id) values (1); not sql');
    assert.equal(res.status, 400);
    assert.match(res.body.message, /^Failed to execute query\. Raw error:\n/);
    assert.deepEqual(res.body.data, {});
    const check = await sql("select count(*) as n from information_schema.tables where table_name = 'console_b'");
    const sqliteCheck = await sql("select count(*) as n from sqlite_master where name = 'console_b'");
    // One of the two catalogue reads exists on each driver; neither finds the table.
    const found = [check, sqliteCheck].filter((r) => r.status === 200).map((r) => r.body.rows[0][0]);
    assert.deepEqual(found, ['0']);
  });

  test('an empty or too long query is a 400 naming the query', async () => {
    const empty = await sql('  ');
    assert.equal(empty.status, 400);
    assert.equal(empty.body.data.query.code, 'validation_required');
    const long = await sql('select ' + '1'.repeat(5000));
    assert.equal(long.status, 400);
    assert.equal(long.body.data.query.code, 'validation_length_out_of_range');
  });

  test('statements that reach files or programs outside the database are refused, before anything runs', async () => {
    const before = await sql("select count(*) from users");
    for (const query of [
      "ATTACH DATABASE '/tmp/cairn-console-attach.db' AS other",
      "/* hidden */ -- still\n attach '/tmp/cairn-console-attach.db' as other",
      'DETACH DATABASE other',
      "VACUUM INTO '/tmp/cairn-console-vacuum.db'",
      "select 1; COPY (select 1) TO PROGRAM 'true'",
      "select pg_read_file('/etc/hostname')",
      "SELECT lo_import('/etc/hostname')",
    ]) {
      const res = await sql(query);
      assert.equal(res.status, 400, `${query}: ${res.text}`);
      assert.equal(res.body.data.query.code, 'validation_sql_outside_database', query);
    }
    assert.deepEqual((await sql('select count(*) from users')).body.rows, before.body.rows);
    // Such words elsewhere in a statement are only words.
    const words = await sql("select 'attach' as a, 'copy into' as b");
    assert.equal(words.status, 200, words.text);
    assert.deepEqual(words.body.rows, [['attach', 'copy into']]);
  });

  test('at most 1000 rows are answered', async () => {
    const res = await sql('with recursive n(i) as (select 1 union all select i + 1 from n where i < 1500) select i from n');
    assert.equal(res.status, 200);
    assert.equal(res.body.rows.length, 1000);
  });
});
