import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AUTH_ORIGINS } from '../../src/collections/pocketbase-system.ts';
import { recordIdsStep } from '../../src/collections/table-sync.ts';
import type { Queryable } from '../../src/storage/types.ts';
import { databaseOf } from '../helpers/inspect.ts';
import { skipOn } from '../helpers/postgres.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

// On PostgreSQL a record's id and the relation fields that hold ids must share a collation: the
// database's default (even C.UTF-8) is not "C", so `r1.id = t0.team` had none, and the join through a
// relation scanned the related table for every row (1.4 s for a count over 100,000 posts whose rule
// reads author.permissions, against 0.36 s by the key).

/** Whether the `id` of `table` compares as "C". */
async function idIsC(db: Queryable, table: string): Promise<boolean> {
  const row = await db.get<{ c: number }>(
    `SELECT a.attcollation = 'pg_catalog."C"'::regcollation AS c FROM pg_attribute a WHERE a.attrelid = to_regclass(quote_ident(?)) AND a.attname = 'id'`,
    [table],
  );
  // Booleans read as 1 and 0, as on SQLite.
  return row?.c === 1;
}

/** The plan of the join the rule compiler writes for a path through a relation (`team.name`). */
async function joinPlan(db: Queryable): Promise<string[]> {
  return db.transaction(async (tx) => {
    // A handful of rows reads fastest without any index; with sequential scans off the planner shows
    // whether the key's index can serve the join at all.
    await tx.exec('SET LOCAL enable_seqscan = off');
    const rows = await tx.all<Record<string, string>>(
      `EXPLAIN SELECT COUNT(*) FROM players t0 WHERE EXISTS (SELECT 1 FROM (SELECT 1) _j0 LEFT JOIN teams r1 ON r1.id = t0.team WHERE r1.name = ?)`,
      ['reds'],
    );
    return rows.map((r) => Object.values(r)[0]);
  });
}

describe('record ids compare as the relation fields that hold them', { skip: skipOn('sqlite', "PostgreSQL's collations") }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'teams', fields: [{ name: 'name', type: 'text' }], listRule: '', viewRule: '' });
    await createCollection(server, {
      name: 'players',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'team', type: 'relation', options: { toCollection: 'teams', maxSelect: 1 } },
      ],
      listRule: "team.name != ''",
      viewRule: '',
    });
    const team = await server.admin('POST', '/api/collections/teams/records', { body: { name: 'reds' } });
    assert.equal(team.status, 200, team.text);
    for (const name of ['ann', 'bo']) {
      const res = await server.admin('POST', '/api/collections/players/records', { body: { name, team: team.body.id } });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(() => server?.close());

  test('a new collection gets an id the join through a relation finds by its key', async () => {
    const db = await databaseOf(server);
    assert.equal(await idIsC(db, 'teams'), true);
    const plan = await joinPlan(db);
    assert.ok(plan.some((line) => /Index.*teams_pkey/.test(line)), plan.join('\n'));
  });

  test('a table of an earlier version gets it once, its data and the views reading it kept', async () => {
    const db = await databaseOf(server);
    await db.transaction(async (tx) => {
      await tx.exec('CREATE VIEW team_names AS SELECT id, name FROM teams');
      await tx.exec('CREATE VIEW team_names_upper AS SELECT id, upper(name) AS name FROM team_names');
    });
    try {
      // What versions before this one made: the database's default collation. A view reading the
      // table stands in the way of changing it.
      await assert.rejects(db.exec('ALTER TABLE teams ALTER COLUMN id TYPE text COLLATE "default"'), /view/);
      await db.transaction(async (tx) => {
        await tx.exec('DROP VIEW team_names_upper');
        await tx.exec('DROP VIEW team_names');
        await tx.exec('ALTER TABLE teams ALTER COLUMN id TYPE text COLLATE "default"');
        await tx.exec(`ALTER TABLE "${AUTH_ORIGINS}" ALTER COLUMN id TYPE text COLLATE "default"`);
        await tx.exec('CREATE VIEW team_names AS SELECT id, name FROM teams');
        await tx.exec('CREATE VIEW team_names_upper AS SELECT id, upper(name) AS name FROM team_names');
      });
      assert.equal(await idIsC(db, 'teams'), false);
      assert.equal(await idIsC(db, AUTH_ORIGINS), false);
      assert.ok(!(await joinPlan(db)).some((line) => line.includes('teams_pkey')), 'the old column: no index for the join');

      const step = recordIdsStep([AUTH_ORIGINS]);
      await db.transaction((tx) => step.up(tx));

      assert.equal(await idIsC(db, 'teams'), true);
      assert.equal(await idIsC(db, AUTH_ORIGINS), true, 'a system record table, not in _collections');
      assert.ok((await joinPlan(db)).some((line) => /Index.*teams_pkey/.test(line)));
      assert.deepEqual(await db.all('SELECT name FROM team_names_upper'), [{ name: 'REDS' }], 'the views reading it are back');
      const list = await server.request('GET', '/api/collections/players/records?sort=name');
      assert.equal(list.status, 200, list.text);
      assert.deepEqual(list.body.items.map((p: { name: string }) => p.name), ['ann', 'bo'], 'the rule through the relation still matches');
      // Once aligned, the step changes nothing.
      await db.transaction((tx) => step.up(tx));
      assert.equal(await idIsC(db, 'teams'), true);
    } finally {
      await db.exec('DROP VIEW IF EXISTS team_names_upper; DROP VIEW IF EXISTS team_names');
    }
  });
});
