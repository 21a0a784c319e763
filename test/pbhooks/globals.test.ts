import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

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

// ≥ 0.23: cookies of the request as Go's http.Request gives them; dbx binds an undefined value as NULL.
const NEW = `
routerAdd("GET", "/cookies", (e) => {
  const all = e.request.cookies().map((c) => c.name + "=" + c.value).join(",");
  let session = "";
  try {
    session = e.request.cookie("session").value;
  } catch (err) {
    session = "missing: " + err.message;
  }
  return e.json(200, { all, session });
});
routerAdd("POST", "/setup", (e) => {
  const collection = new Collection({
    name: "visits_log",
    type: "base",
    listRule: "",
    createRule: null,
    fields: [
      { name: "path", type: "text", required: true },
      { name: "hits", type: "number" },
    ],
  });
  $app.save(collection);
  const again = $app.findCollectionByNameOrId("visits_log");
  again.listRule = null;
  $app.save(again);
  const visit = new Record($app.findCollectionByNameOrId("visits_log"));
  visit.set("path", "/home");
  visit.set("hits", 3);
  $app.save(visit);
  return e.json(200, { id: collection.id, name: collection.name });
});
routerAdd("POST", "/setup-again", (e) => {
  // A new collection of a name taken is refused, as in PocketBase; v0.22's \`schema\` names the fields.
  try {
    $app.save(new Collection({ name: "visits_log", type: "base", schema: [{ name: "other", type: "text" }] }));
    return e.json(200, { refused: false });
  } catch (err) {
    return e.json(200, { refused: true, fields: $app.findCollectionByNameOrId("visits_log").fields.map((f) => f.name).filter((n) => n === "other").length });
  }
});
cronAdd("Nightly clean up", "0 3 * * *", () => {});
routerAdd("POST", "/teardown", (e) => {
  $app.delete($app.findCollectionByNameOrId("visits_log"));
  return e.noContent(204);
});
routerAdd("GET", "/null-bind", (e) => {
  const row = new DynamicModel({ v: "" });
  $app.db().newQuery("SELECT COALESCE({:note}, 'was null') AS v").bind({ note: undefined }).one(row);
  return e.json(200, { v: row.v });
});
`;

describe('pb_hooks: globals real files use', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    process.env.PET_SUFFIX = 'good';
    pb = pbDir({ 'old.pb.js': OLD, 'new.pb.js': NEW });
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

  test('e.request.cookies() and cookie(name), which throws for a cookie not sent', async () => {
    const both = await server.request('GET', '/cookies', { headers: { cookie: 'theme=dark; session="abc123"' } });
    assert.equal(both.status, 200, both.text);
    assert.deepEqual(both.body, { all: 'theme=dark,session=abc123', session: 'abc123' });
    const none = await server.request('GET', '/cookies');
    assert.deepEqual(none.body, { all: '', session: 'missing: http: named cookie not present' });
  });

  test('$app.save(new Collection({...})) creates it, a second save changes it, $app.delete removes it', async () => {
    const setup = await server.request('POST', '/setup', { body: {} });
    assert.equal(setup.status, 200, setup.text);
    assert.equal(setup.body.name, 'visits_log');
    assert.ok(setup.body.id);
    const collection = await server.admin('GET', '/api/collections/visits_log');
    assert.equal(collection.status, 200, collection.text);
    assert.equal(collection.body.id, setup.body.id);
    assert.equal(collection.body.listRule, null);
    assert.deepEqual(
      collection.body.fields.filter((f: { system?: boolean }) => !f.system).map((f: { name: string; type: string }) => `${f.name}:${f.type}`),
      // Every Cairn record has created and updated, listed as PocketBase lists its autodate fields.
      ['path:text', 'hits:number', 'created:autodate', 'updated:autodate'],
    );
    const list = await server.admin('GET', '/api/collections/visits_log/records');
    assert.deepEqual(list.body.items.map((r: { path: string; hits: number }) => [r.path, r.hits]), [['/home', 3]]);
    const again = await server.request('POST', '/setup-again', { body: {} });
    assert.deepEqual(again.body, { refused: true, fields: 0 });
    const teardown = await server.request('POST', '/teardown', { body: {} });
    assert.equal(teardown.status, 204, teardown.text);
    assert.equal((await server.admin('GET', '/api/collections/visits_log')).status, 404);
  });

  test('bind() of an undefined value binds NULL', async () => {
    const res = await server.request('GET', '/null-bind');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { v: 'was null' });
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
