import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Record tables' triggers announce a change (`NOTIFY cairn_records`) only while a node other than
 * the writer's lists a realtime client: a node hands its own changes to its own clients, and every
 * notice makes PostgreSQL commit notifying writers one at a time. Seen by a connection listening
 * on the channel; a marker it sends itself comes after every notice of a write answered before it.
 */
describe('realtime notices between nodes on PostgreSQL', { skip: skipOn('sqlite', 'notices are PostgreSQL’s') }, () => {
  const dirs: string[] = [];
  let url: string;
  let nodeA: TestServer;
  let nodeB: TestServer;
  let listener: pg.Client;
  const heard: string[] = [];
  let markers = 0;

  before(async () => {
    for (let i = 0; i < 2; i++) dirs.push(mkdtempSync(path.join(tmpdir(), 'cairn-pg-notices-')));
    url = await databaseUrlFor(dirs[0]);
    nodeA = await startServer({ dir: dirs[0], env: { CAIRN_DATABASE_URL: url, CAIRN_NODE_ID: 'node-a', CAIRN_REQUEST_LOGS: 'off' } });
    nodeB = await startServer({ dir: dirs[1], env: { CAIRN_DATABASE_URL: url, CAIRN_NODE_ID: 'node-b', CAIRN_REQUEST_LOGS: 'off' } });
    await createCollection(nodeA, { name: 'live', fields: [{ name: 'title', type: 'text' }], listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' });
    listener = new pg.Client({ connectionString: url });
    await listener.connect();
    listener.on('notification', (n) => heard.push(n.payload ?? ''));
    await listener.query('LISTEN cairn_records');
  });

  after(async () => {
    await listener?.end();
    await nodeB?.close();
    await nodeA?.close();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dirs[0]);
  });

  /** The notices `act` caused: those heard before a marker sent once it is done. */
  async function noticesOf(act: () => Promise<void>): Promise<Array<{ n: string | null; a: string; r: string }>> {
    heard.length = 0;
    await act();
    const marker = `marker-${++markers}`;
    await listener.query('SELECT pg_notify($1, $2)', ['cairn_records', marker]);
    await waitFor(() => heard.includes(marker), { what: 'the marker notice' });
    return heard.slice(0, heard.indexOf(marker)).map((p) => JSON.parse(p));
  }

  const create = async (node: TestServer, title: string): Promise<string> => {
    const res = await node.request('POST', '/api/collections/live/records', { body: { title } });
    assert.equal(res.status, 200, res.text);
    return res.body.id;
  };

  test('no notice while no node lists a client, nor for the writer’s own clients', async () => {
    assert.deepEqual(await noticesOf(async () => void (await create(nodeA, 'nobody listens'))), []);
    const own = await SseStream.open(nodeA.url);
    try {
      assert.equal((await subscribeRaw(nodeA.url, own.clientId, ['live'])).status, 204);
      let id = '';
      assert.deepEqual(await noticesOf(async () => void (id = await create(nodeA, 'own client'))), []);
      // The node's own client still gets the change, from the node itself.
      const event = await own.next((e) => e.event === 'live' && JSON.parse(e.data).record.id === id, 'the create on its own node');
      assert.equal(JSON.parse(event.data).action, 'create');
    } finally {
      own.close();
    }
  });

  test('a client on another node: the writer’s changes are announced and reach it, until it leaves', async () => {
    const remote = await SseStream.open(nodeB.url);
    let id = '';
    try {
      assert.equal((await subscribeRaw(nodeB.url, remote.clientId, ['live'])).status, 204);
      const notices = await noticesOf(async () => void (id = await create(nodeA, 'seen on B')));
      assert.deepEqual(notices.map((n) => [n.n, n.a, n.r]), [['node-a', 'create', id]]);
      const event = await remote.next((e) => e.event === 'live' && JSON.parse(e.data).record.id === id, 'the create on the other node');
      assert.equal(JSON.parse(event.data).record.title, 'seen on B');
      const deleted = await noticesOf(async () => assert.equal((await nodeA.request('DELETE', `/api/collections/live/records/${id}`)).status, 204));
      assert.deepEqual(deleted.map((n) => [n.a, n.r]), [['delete', id]]);
      await remote.next((e) => e.event === 'live' && JSON.parse(e.data).action === 'delete', 'the delete on the other node');
    } finally {
      remote.close();
    }
    // Once B has dropped its client, A's writes go unannounced again.
    await waitFor(async () => (await listener.query('SELECT count(*)::int AS n FROM cairn_system._realtime_clients')).rows[0].n === 0, { what: 'the client to leave the directory' });
    assert.deepEqual(await noticesOf(async () => void (await create(nodeA, 'after B left'))), []);
  });

  test('a write made outside Cairn is announced to any node holding a client', async () => {
    const client = await SseStream.open(nodeA.url);
    try {
      assert.equal((await subscribeRaw(nodeA.url, client.clientId, ['live'])).status, 204);
      const id = 'outside000000001';
      const notices = await noticesOf(async () => {
        await listener.query(`INSERT INTO main.live (id, title, created, updated) VALUES ($1, 'from psql', '2026-12-04 00:00:00.000Z', '2026-12-04 00:00:00.000Z')`, [id]);
      });
      assert.deepEqual(notices.map((n) => [n.n, n.a, n.r]), [[null, 'create', id]]);
      const event = await client.next((e) => e.event === 'live' && JSON.parse(e.data).record.id === id, 'the outside write');
      assert.equal(JSON.parse(event.data).record.title, 'from psql');
    } finally {
      client.close();
    }
  });
});
