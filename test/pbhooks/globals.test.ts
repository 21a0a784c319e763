import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

function pbDir(files: Record<string, string>): { root: string; dir: string; remove(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'cairn-pbglob-'));
  const dir = path.join(root, 'pb_hooks');
  mkdirSync(dir);
  for (const [name, text] of Object.entries(files)) writeFileSync(path.join(dir, name), text);
  return { root, dir, remove: () => rmSync(root, { recursive: true, force: true }) };
}

// What real files lean on besides $app: process.env, e.model in v0.22 model events, a route that
// answers twice, module.exports at a file's top level, $os.writeFile.
const OLD = `
onModelBeforeCreate((e) => {
  if (e.model.tableName() === "pets") e.model.set("name", e.model.get("name") + " (" + process.env.PET_SUFFIX + ")");
});
routerAdd("GET", "/twice", (c) => {
  c.json(200, { first: true });
  return c.json(500, { second: true });
});
routerAdd("POST", "/write", (c) => {
  $os.writeFile(c.queryParam("to"), "written by a hook", 0o644);
  return c.noContent(204);
});
module.exports = { unused: true };
`;

describe('pb_hooks: globals real files use', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    process.env.PET_SUFFIX = 'good';
    pb = pbDir({ 'old.pb.js': OLD });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
    await createCollection(server, { name: 'pets', fields: [{ name: 'name', type: 'text' }] });
  });
  after(async () => {
    delete process.env.PET_SUFFIX;
    await server?.close();
    pb?.remove();
  });

  test('e.model and process.env in a v0.22 model event', async () => {
    const res = await server.admin('POST', '/api/collections/pets/records', { body: { name: 'Rex' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.name, 'Rex (good)');
  });

  test('a second answer of a route is ignored; $os.writeFile writes', async () => {
    const res = await server.request('GET', '/twice');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { first: true });
    const to = path.join(pb.root, 'out.txt');
    const w = await server.request('POST', `/write?to=${encodeURIComponent(to)}`, { body: {} });
    assert.equal(w.status, 204, w.text);
    assert.equal(readFileSync(to, 'utf8'), 'written by a hook');
  });
});
