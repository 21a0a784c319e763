import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// e.next() in a record event, as handlers use it: what follows it sees the saved record, a `try`
// around it catches what it throws, a throw after it rolls the write back. A handler that does
// nothing after e.next() leaves the write to the main thread (worker.ts, deferredNext); these are
// the cases where what comes after must see the write's outcome as e.next() returned it.
const HOOKS = `
onRecordCreate((e) => {
  e.next();
  // Reads of the record after e.next() see the saved record.
  const stamp = e.record.getString("created") + "|" + e.record.id;
  const trail = new Record($app.findCollectionByNameOrId("trail"));
  trail.set("note", stamp);
  $app.save(trail);
}, "entries");

onRecordCreate((e) => {
  try {
    e.next();
  } catch (err) {
    throw new BadRequestError("refused: " + err.message);
  }
}, "guarded");

onRecordCreate((e) => {
  e.record.set("title", e.record.getString("title") + "!");
  e.next();
}, "plain");

onRecordCreate((e) => {
  e.next();
  if (e.record.getString("title") === "undo") throw new BadRequestError("undone after the write");
}, "undoable");
`;

describe('pb_hooks: e.next() in record events', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    pb = pbDir({ 'next.pb.js': HOOKS });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
    await createCollection(server, { name: 'trail', fields: [{ name: 'note', type: 'text' }] });
    for (const name of ['entries', 'guarded', 'plain', 'undoable']) {
      await createCollection(server, { name, fields: [{ name: 'title', type: 'text', required: true }, { name: 'n', type: 'number', max: 10 }] });
    }
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  test('after e.next(), the record read is the saved one, and a save after it is part of the write', async () => {
    const res = await server.admin('POST', '/api/collections/entries/records', { body: { title: 'one' } });
    assert.equal(res.status, 200, res.text);
    const trail = await server.admin('GET', `/api/collections/trail/records?filter=${encodeURIComponent(`note ~ "${res.body.id}"`)}`);
    assert.equal(trail.status, 200, trail.text);
    assert.equal(trail.body.items.length, 1, trail.text);
    assert.equal(trail.body.items[0].note, `${res.body.created}|${res.body.id}`);
  });

  test('a try around e.next() catches what the write throws', async () => {
    const res = await server.admin('POST', '/api/collections/guarded/records', { body: {} });
    assert.equal(res.status, 400, res.text);
    assert.match(res.body.message, /^refused: /);
    const list = await server.admin('GET', '/api/collections/guarded/records');
    assert.equal(list.body.totalItems, 0);
  });

  test('without a try, the write is saved with the changes made before e.next(), and its errors answer as they are', async () => {
    const ok = await server.admin('POST', '/api/collections/plain/records', { body: { title: 'hello' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.title, 'hello!');
    const stored = await server.admin('GET', `/api/collections/plain/records/${ok.body.id}`);
    assert.equal(stored.body.title, 'hello!');

    const bad = await server.admin('POST', '/api/collections/plain/records', { body: { title: 'too many', n: 99 } });
    assert.equal(bad.status, 400, bad.text);
    assert.ok(bad.body.data.n, bad.text);
    const list = await server.admin('GET', '/api/collections/plain/records');
    assert.equal(list.body.totalItems, 1);
  });

  test('a throw after e.next() rolls the write back', async () => {
    const undone = await server.admin('POST', '/api/collections/undoable/records', { body: { title: 'undo' } });
    assert.equal(undone.status, 400, undone.text);
    assert.equal(undone.body.message, 'undone after the write');
    const kept = await server.admin('POST', '/api/collections/undoable/records', { body: { title: 'keep' } });
    assert.equal(kept.status, 200, kept.text);
    const list = await server.admin('GET', '/api/collections/undoable/records');
    assert.deepEqual(list.body.items.map((r: { title: string }) => r.title), ['keep']);
  });
});
