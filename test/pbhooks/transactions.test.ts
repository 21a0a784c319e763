import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { tally } from '../helpers/tally.ts';
import { pbDir } from './pb-dir.ts';

// Handlers written for PocketBase: its runInTransaction is one transaction of the app's database,
// and its transactions run one at a time.
const HOOKS = `
routerAdd("POST", "/tx/increment/{id}", (e) => {
  $app.runInTransaction((txApp) => {
    const counter = txApp.findRecordById("counters", e.request.pathValue("id"));
    counter.set("n", counter.getInt("n") + 1);
    txApp.save(counter);
  });
  return e.json(200, { ok: true });
});

routerAdd("POST", "/tx/increment-then-fail/{id}", (e) => {
  $app.runInTransaction((txApp) => {
    const counter = txApp.findRecordById("counters", e.request.pathValue("id"));
    counter.set("n", counter.getInt("n") + 1);
    txApp.save(counter);
    const note = new Record(txApp.findCollectionByNameOrId("notes"));
    note.set("title", "written, then undone");
    txApp.save(note);
    throw new BadRequestError("changed my mind");
  });
  return e.json(200, { ok: true });
});

routerAdd("POST", "/tx/nested/{id}", (e) => {
  $app.runInTransaction((txApp) => {
    const counter = txApp.findRecordById("counters", e.request.pathValue("id"));
    counter.set("n", counter.getInt("n") + 10);
    txApp.save(counter);
    txApp.runInTransaction((inner) => {
      const note = new Record(inner.findCollectionByNameOrId("notes"));
      note.set("title", "nested");
      inner.save(note);
    });
    if (e.request.url.query().get("fail")) throw new Error("after the nested one");
  });
  return e.json(200, { ok: true });
});

routerAdd("POST", "/tx/stuck/{id}", (e) => {
  $app.runInTransaction((txApp) => {
    const counter = txApp.findRecordById("counters", e.request.pathValue("id"));
    counter.set("n", 999);
    txApp.save(counter);
    for (;;) {}
  });
});

routerAdd("POST", "/tx/schema", (e) => {
  $app.runInTransaction((txApp) => {
    const c = new Collection({ name: "made_inside", type: "base", fields: [{ name: "a", type: "text" }] });
    txApp.save(c);
  });
});

onRecordCreateRequest((e) => {
  const counter = e.app.findRecordById("counters", e.record.getString("counter"));
  counter.set("n", counter.getInt("n") + 1);
  e.app.save(counter);
  e.next();
}, "tallies");

onRecordCreate((e) => {
  e.next();
  e.app.runInTransaction((txApp) => {
    const counter = txApp.findRecordById("counters", e.record.getString("counter"));
    counter.set("n", counter.getInt("n") + 1);
    txApp.save(counter);
    if (e.record.getString("title") === "refuse") throw new BadRequestError("refused inside");
  });
}, "bumps");
`;

describe('pb_hooks: $app.runInTransaction', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;
  let id: string;

  before(async () => {
    pb = pbDir({ 'tx.pb.js': HOOKS });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir, CAIRN_HOOK_TIMEOUT_MS: '1500', CAIRN_LOG_LEVEL: 'error' } });
    await createCollection(server, { name: 'counters', fields: [{ name: 'n', type: 'number' }] });
    await createCollection(server, { name: 'notes', listRule: '', fields: [{ name: 'title', type: 'text' }] });
    await createCollection(server, { name: 'bumps', createRule: '', fields: [{ name: 'counter', type: 'text' }, { name: 'title', type: 'text' }] });
    await createCollection(server, { name: 'tallies', createRule: '', fields: [{ name: 'counter', type: 'text' }] });
    const created = await server.admin('POST', '/api/collections/counters/records', { body: { n: 0 } });
    assert.equal(created.status, 200, created.text);
    id = created.body.id;
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  const counter = async () => (await server.admin('GET', `/api/collections/counters/records/${id}`)).body.n as number;
  const notes = async () => (await server.admin('GET', '/api/collections/notes/records')).body.items.map((n: { title: string }) => n.title) as string[];

  test('a handler that throws after saving leaves nothing: its saves roll back, its error is the answer', async () => {
    const before = await counter();
    const reply = await server.request('POST', `/tx/increment-then-fail/${id}`);
    assert.equal(reply.status, 400, reply.text);
    assert.equal(reply.body.message, 'changed my mind');
    assert.equal(await counter(), before);
    assert.deepEqual(await notes(), []);
  });

  test('read-modify-write in transactions sent at once: none lost', async () => {
    const before = await counter();
    const replies = await Promise.all(Array.from({ length: 20 }, () => server.request('POST', `/tx/increment/${id}`)));
    assert.deepEqual(tally(replies), { 200: 20 }, replies.map((r) => r.text).join('\n'));
    assert.equal(await counter(), before + 20);
  });

  test('a transaction inside one joins it: both commit, or both roll back', async () => {
    const before = await counter();
    const failed = await server.request('POST', `/tx/nested/${id}?fail=1`);
    assert.equal(failed.status, 400, failed.text);
    assert.equal(await counter(), before);
    assert.deepEqual(await notes(), []);
    const done = await server.request('POST', `/tx/nested/${id}`);
    assert.equal(done.status, 200, done.text);
    assert.equal(await counter(), before + 10);
    assert.deepEqual(await notes(), ['nested']);
  });

  test('inside a record event it joins the write: a refusal there undoes the record and the counter', async () => {
    const before = await counter();
    const ok = await server.request('POST', '/api/collections/bumps/records', { body: { counter: id, title: 'fine' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(await counter(), before + 1);
    const refused = await server.request('POST', '/api/collections/bumps/records', { body: { counter: id, title: 'refuse' } });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(await counter(), before + 1);
    const bumps = await server.admin('GET', '/api/collections/bumps/records');
    assert.deepEqual(bumps.body.items.map((b: { title: string }) => b.title), ['fine']);
  });

  test("record events' handlers reading and saving another record, in writes sent at once: none lost", async () => {
    const before = await counter();
    const replies = await Promise.all(Array.from({ length: 20 }, () => server.request('POST', '/api/collections/tallies/records', { body: { counter: id } })));
    assert.deepEqual(tally(replies), { 200: 20 }, replies.map((r) => r.text).join('\n'));
    assert.equal(await counter(), before + 20);
  });

  test('a handler past the time limit inside its transaction: rolled back, and writes go on', async () => {
    const before = await counter();
    const stuck = await server.request('POST', `/tx/stuck/${id}`);
    assert.equal(stuck.status, 503, stuck.text);
    assert.equal(await counter(), before);
    const next = await server.request('POST', `/tx/increment/${id}`);
    assert.equal(next.status, 200, next.text);
    assert.equal(await counter(), before + 1);
  });

  test('a collection change inside a transaction is refused with a 400 instead of waiting on it', async () => {
    const reply = await server.request('POST', '/tx/schema');
    assert.equal(reply.status, 400, reply.text);
    assert.equal((await server.admin('GET', '/api/collections/made_inside')).status, 404);
  });
});
