import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// A `*.pb.js` file given among the TypeScript hooks (--hooks, CAIRN_HOOKS_DIR) runs as pb_hooks:
// `$os` and the other globals exist, and a TypeScript hook beside it still loads.
const PB = `
routerAdd("POST", "/count", (e) => {
  const n = ($app.store().get("hits") ?? 0) + 1;
  $app.store().set("hits", n);
  return e.json(200, { n, home: $os.getenv("HOME") !== undefined, fields: new TextField({ name: "t" }).type });
});
routerAdd("GET", "/count", (e) => e.json(200, { n: $app.store().get("hits"), has: $app.store().has("hits") }));
`;
const TS = `export default (app: any) => app.routerAdd('GET', '/ts', (e: any) => e.json(200, { ts: true }));\n`;

describe('pb_hooks: a .pb.js file under --hooks', () => {
  let server: TestServer;
  let dir: ReturnType<typeof pbDir>;

  before(async () => {
    dir = pbDir({ 'app.pb.js': PB, 'main.ts': TS });
    server = await startServer({ env: { CAIRN_HOOKS_DIR: dir.dir } });
  });
  after(async () => {
    await server?.close();
    dir?.remove();
  });

  test('runs as pb_hooks, and $app.store() keeps a value across requests (and workers)', async () => {
    const requests = [];
    for (let i = 0; i < 6; i++) requests.push(server.request('POST', '/count', { body: {} }));
    const answers = await Promise.all(requests);
    for (const res of answers) assert.equal(res.status, 200, res.text);
    assert.equal(answers[0].body.fields, 'text');
    assert.equal(answers[0].body.home, true);
    const read = await server.request('GET', '/count');
    assert.equal(read.status, 200, read.text);
    assert.equal(read.body.has, true);
    assert.ok(read.body.n >= 1 && read.body.n <= 6, read.text);
  });

  test('the TypeScript hook beside it still loads', async () => {
    const res = await server.request('GET', '/ts');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { ts: true });
  });
});
