import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, test } from 'node:test';
import { createCollection, startServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

const pb = pbDir({});
after(() => pb.remove());

test('onTerminate handlers run once as the server stops, while $app still answers', async () => {
  const out = path.join(pb.root, 'terminated.txt');
  writeFileSync(
    path.join(pb.dir, 'stop.pb.js'),
    `
onTerminate((e) => {
  const n = $app.countRecords("visits");
  $os.writeFile(${JSON.stringify(out)}, "visits=" + n + " restart=" + e.isRestart);
  e.next();
});
`,
  );
  const server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
  try {
    await createCollection(server, { name: 'visits', fields: [{ name: 'at', type: 'text' }] });
    for (let i = 0; i < 3; i++) assert.equal((await server.admin('POST', '/api/collections/visits/records', { body: { at: String(i) } })).status, 200);
    assert.equal(existsSync(out), false, 'not before the server stops');
  } finally {
    await server.close();
  }
  assert.equal(readFileSync(out, 'utf8'), 'visits=3 restart=false');
});
