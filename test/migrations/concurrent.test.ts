import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startNodes, type TestNodes } from '../helpers/nodes.ts';
import { onPostgres, skipOn } from '../helpers/postgres.ts';
import { type Reply, startServer, type TestServer } from '../helpers/server.ts';
import { tally } from '../helpers/tally.ts';
import { apply, saveMigration } from './helpers.ts';

/** A migration that creates database `db` with a collection, failing at its last step when `fails`. */
function newDatabaseYaml(version: string, db: string, fails: boolean): string {
  return `version: ${version}
name: posts_in_${db}
databases:
  ${db}:
    collections:
      mposts:
        create_table:
          name: mposts
          type: base
          system: false
          schema:
            - name: title
              type: text
${fails ? '        add_indexes:\n          - {name: idx_bad, sql: "CREATE UNIQUE INDEX idx_bad ON mposts (nosuchcolumn)"}\n' : ''}`;
}

interface Write {
  email: string;
  reply: Reply;
}

/**
 * Creates users in database `db` through `server`, four requests in flight, until `until` has
 * settled; then one more round, so that some land after it too. Resolves with every answer.
 */
async function writeUsersWhile(server: TestServer, db: string, until: Promise<unknown>): Promise<Write[]> {
  let settled = false;
  void until.finally(() => {
    settled = true;
  });
  const writes: Write[] = [];
  let n = 0;
  const lane = async () => {
    for (let last = false; !last; ) {
      last = settled;
      const email = `w${n++}@example.com`;
      const reply = await server.admin('POST', '/api/collections/users/records', { db, body: { email, password: 'user-password-1', passwordConfirm: 'user-password-1' } });
      writes.push({ email, reply });
    }
  };
  await Promise.all([lane(), lane(), lane(), lane()]);
  return writes;
}

async function listedDatabases(server: TestServer): Promise<string[]> {
  return (await server.admin('GET', '/api/databases')).body.map((d: { name: string }) => d.name);
}

/**
 * Requests that arrive while a migration runs are answered as if they came before or after it, never
 * with a success that the migration's failure then undoes, and never with a 500.
 */
describe('migrations: requests at the same moment', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('writes into a database a failing migration creates: each a 404, and nothing of the database left', async () => {
    const version = await saveMigration(server, { yaml: newDatabaseYaml('20310101_000000_000', 'mdb', true) });
    const applying = apply(server, version);
    const writes = await writeUsersWhile(server, 'mdb', applying);
    const applied = await applying;
    assert.equal(applied.status, 400, applied.text);
    assert.match(applied.body.message, /nosuchcolumn/);
    // Before the migration committed the database did not exist for requests; then it never did.
    assert.deepEqual(tally(writes.map((w) => w.reply)), { 404: writes.length }, writes.map((w) => `${w.reply.status} ${w.reply.text}`).join('\n'));
    assert.equal((await server.admin('GET', '/api/collections/users/records', { db: 'mdb' })).status, 404);
    assert.ok(!(await listedDatabases(server)).includes('mdb'));
    if (!onPostgres) assert.equal(existsSync(path.join(server.dir, 'databases', 'mdb.db')), false);
  });

  test('writes into a database a migration creates: each a 404 or a 200, and every record answered 200 is kept', async () => {
    const version = await saveMigration(server, { yaml: newDatabaseYaml('20310101_000000_001', 'mdb_ok', false) });
    const applying = apply(server, version);
    const writes = await writeUsersWhile(server, 'mdb_ok', applying);
    const applied = await applying;
    assert.equal(applied.status, 200, applied.text);
    for (const w of writes) assert.ok(w.reply.status === 404 || w.reply.status === 200, `${w.reply.status} ${w.reply.text}`);
    const kept = writes.filter((w) => w.reply.status === 200).map((w) => w.email);
    // The lanes' last round starts after the answer: the database is served by then.
    assert.ok(kept.length >= 4, String(kept.length));
    const listed = await server.admin('GET', '/api/collections/users/records?perPage=500', { db: 'mdb_ok' });
    assert.deepEqual(listed.body.items.map((u: { email: string }) => u.email).sort(), kept.sort());
    assert.ok((await listedDatabases(server)).includes('mdb_ok'));
  });

  test('saves of different content under one version: one 200, the others 409, and the stored file is the one answered', async () => {
    const yaml = (name: string) => `version: 20300101_000000_002\nname: ${name}\ndatabases:\n  main:\n    collections:\n      ${name}:\n        create_table:\n          name: ${name}\n          type: base\n          schema:\n            - name: title\n              type: text\n`;
    const replies = await Promise.all(Array.from({ length: 8 }, (_, i) => server.admin('POST', '/api/migrations/save', { body: { yaml: yaml(`diff${i}`) } })));
    assert.deepEqual(tally(replies), { 200: 1, 409: 7 }, replies.map((r) => r.text).join('\n'));
    for (const r of replies.filter((r) => r.status === 409)) assert.equal(r.body.data.version.code, 'validation_version_exists');
    const stored = await server.admin('GET', '/api/migrations/load?version=20300101_000000_002');
    assert.equal(stored.body.yaml, replies.find((r) => r.status === 200)!.body.yaml);
  });

  test('saves of the same content under one version: each 200, one file', async () => {
    const yaml = 'version: 20300101_000000_003\nname: same\ndatabases:\n  main:\n    collections:\n      same:\n        create_table:\n          name: same\n          type: base\n          schema: []\n';
    const replies = await Promise.all(Array.from({ length: 8 }, () => server.admin('POST', '/api/migrations/save', { body: { yaml } })));
    assert.deepEqual(tally(replies), { 200: 8 }, replies.map((r) => r.text).join('\n'));
    const items = (await server.admin('GET', '/api/migrations')).body.items.filter((i: { version: string }) => i.version === '20300101_000000_003');
    assert.equal(items.length, 1);
  });

  test('deletes of one migration: one 204, the others the 404 of a deleted one', async () => {
    const version = await saveMigration(server, { yaml: 'version: 20300101_000000_004\nname: gone\ndatabases:\n  main:\n    collections:\n      gone:\n        create_table:\n          name: gone\n          type: base\n          schema: []\n' });
    const replies = await Promise.all(Array.from({ length: 8 }, () => server.admin('DELETE', `/api/migrations/${version}`)));
    assert.deepEqual(tally(replies), { 204: 1, 404: 7 }, replies.map((r) => r.text).join('\n'));
  });
});

describe('migrations: a database a migration creates, seen from another node', { skip: skipOn('sqlite', 'nodes share a PostgreSQL database') }, () => {
  let cluster: TestNodes;
  before(async () => {
    cluster = await startNodes(2);
  });
  after(() => cluster.close());

  test('is not served there before the migration commits', async () => {
    const [a, b] = cluster.nodes;
    const version = await saveMigration(a, { yaml: newDatabaseYaml('20310101_000000_010', 'mdb_far', true) });
    const applying = apply(a, version);
    const writes = await writeUsersWhile(b, 'mdb_far', applying);
    assert.equal((await applying).status, 400);
    assert.deepEqual(tally(writes.map((w) => w.reply)), { 404: writes.length }, writes.map((w) => `${w.reply.status} ${w.reply.text}`).join('\n'));
    assert.ok(!(await listedDatabases(b)).includes('mdb_far'));
  });

  test('deletes of one migration sent to both nodes at once: one 204, the others the 404 of a deleted one', async () => {
    for (let round = 0; round < 3; round++) {
      const version = await saveMigration(cluster.nodes[0], { yaml: `version: 20310101_000000_02${round}\nname: gone${round}\ndatabases:\n  main:\n    collections:\n      gone${round}:\n        create_table:\n          name: gone${round}\n          type: base\n          schema: []\n` });
      const replies = await Promise.all(cluster.nodes.flatMap((node) => Array.from({ length: 4 }, () => node.admin('DELETE', `/api/migrations/${version}`))));
      assert.deepEqual(tally(replies), { 204: 1, 404: 7 }, replies.map((r) => r.text).join('\n'));
    }
  });
});
