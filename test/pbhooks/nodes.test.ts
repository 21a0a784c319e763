import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startNodes, type TestNodes } from '../helpers/nodes.ts';
import { skipOn } from '../helpers/postgres.ts';
import { createCollection } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

// A pb_hooks app on two nodes sharing one PostgreSQL database.
const HOOKS = `
onRecordCreate((e) => {
  e.record.set("slug", e.record.getString("title").toLowerCase().replace(/ /g, "-"));
  e.next();
}, "items");
routerAdd("GET", "/api/items/count", (e) => e.json(200, { n: $app.countRecords("items") }));
// Each run writes the second it ran in: two runs of one tick would write the same second twice.
cronAdd("every-second", "@every 1s", () => {
  const run = new Record($app.findCollectionByNameOrId("runs"));
  run.set("second", new Date().toISOString().slice(0, 19));
  $app.save(run);
});
`;

describe('pb_hooks on several nodes', { skip: skipOn('sqlite', 'nodes share a PostgreSQL database') }, () => {
  let root: string;
  let cluster: TestNodes;

  before(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'cairn-pbnodes-'));
    mkdirSync(path.join(root, 'pb_hooks'));
    writeFileSync(path.join(root, 'pb_hooks', 'main.pb.js'), HOOKS);
    cluster = await startNodes(2, { env: { CAIRN_PB_HOOKS_DIR: path.join(root, 'pb_hooks') } });
    await createCollection(cluster.nodes[0], { name: 'items', createRule: '', fields: [{ name: 'title', type: 'text' }, { name: 'slug', type: 'text' }] });
    await createCollection(cluster.nodes[0], { name: 'runs', fields: [{ name: 'second', type: 'text' }] });
  });
  after(async () => {
    await cluster?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test('every node runs the record hooks and routes; a cron job runs each tick once across nodes', async () => {
    for (const [i, node] of cluster.nodes.entries()) {
      const res = await node.request('POST', '/api/collections/items/records', { body: { title: `Item On Node ${i + 1}` } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.slug, `item-on-node-${i + 1}`);
    }
    for (const node of cluster.nodes) assert.deepEqual((await node.request('GET', '/api/items/count')).body, { n: 2 });
    const started = Date.now();
    const runs = await waitFor(
      async () => {
        const res = await cluster.nodes[1].admin('GET', '/api/collections/runs/records?perPage=500');
        return res.body.items.length >= 3 ? (res.body.items as Array<{ second: string }>) : undefined;
      },
      { what: 'three cron runs', timeoutMs: 30_000 },
    );
    const seconds = runs.map((r) => r.second);
    assert.equal(new Set(seconds).size, seconds.length, `one run per tick: ${seconds.join(', ')}`);
    assert.ok(runs.length <= Math.ceil((Date.now() - started) / 1000) + 3, `${runs.length} runs in ${Date.now() - started} ms`);
  });
});
