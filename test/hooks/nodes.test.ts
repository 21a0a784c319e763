import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startNodes, type TestNodes } from '../helpers/nodes.ts';
import { skipOn } from '../helpers/postgres.ts';
import { createCollection } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';
import { type AppDir, appDir } from './app-dir.ts';

const HOOKS = `
export default (app: any) => {
  app.onRecordCreate(async (e: any) => {
    e.record.slug = String(e.record.title).toLowerCase().replace(/ /g, '-');
    await e.next();
  }, 'items');
  app.routerAdd('GET', '/api/items/count', async (e: any) => e.json(200, { n: await e.app.records(e.db).count('items') }));
  // Each run writes the second it ran in: two runs of one tick would write the same second twice.
  app.cronAdd('every-second', '@every 1s', async () => {
    await app.records().create('runs', { second: new Date().toISOString().slice(0, 19) });
  });
};
`;

describe('hooks on several nodes', { skip: skipOn('sqlite', 'nodes share a PostgreSQL database') }, () => {
  let app: AppDir;
  let cluster: TestNodes;

  before(async () => {
    app = appDir({ 'shop.ts': HOOKS });
    cluster = await startNodes(3, { env: { CAIRN_HOOKS_DIR: app.hooks } });
    await createCollection(cluster.nodes[0], { name: 'items', createRule: '', fields: [{ name: 'title', type: 'text' }, { name: 'slug', type: 'text' }] });
    await createCollection(cluster.nodes[0], { name: 'runs', fields: [{ name: 'second', type: 'text' }] });
  });
  after(async () => {
    await cluster?.close();
    app?.remove();
  });

  test('every node runs the record hooks and serves the routes', async () => {
    for (const [i, node] of cluster.nodes.entries()) {
      const res = await node.request('POST', '/api/collections/items/records', { body: { title: `Item On Node ${i + 1}` } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.slug, `item-on-node-${i + 1}`);
    }
    for (const node of cluster.nodes) assert.deepEqual((await node.request('GET', '/api/items/count')).body, { n: 3 });
  });

  test('a cron job every second runs each tick once across the three nodes', async () => {
    const started = Date.now();
    const runs = await waitFor(
      async () => {
        const res = await cluster.nodes[1].admin('GET', '/api/collections/runs/records?perPage=500');
        return res.body.items.length >= 4 ? (res.body.items as Array<{ second: string }>) : undefined;
      },
      { what: 'four cron runs', timeoutMs: 30_000 },
    );
    const seconds = runs.map((r) => r.second);
    assert.equal(new Set(seconds).size, seconds.length, `one run per tick: ${seconds.join(', ')}`);
    // Three nodes each running every tick would have written about three times as many.
    assert.ok(runs.length <= Math.ceil((Date.now() - started) / 1000) + 2, `${runs.length} runs in ${Date.now() - started} ms`);
  });
});
