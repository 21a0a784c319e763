import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

// A small notes app: a route that saves a record, whose create hook reads through $app — a handler
// run from inside another handler's $app call, which must not wait for the caller's worker.
const APP = `
onRecordCreate((e) => {
  const before = $app.findRecordsByFilter("notes", "id != ''").length;
  e.record.set("seen", before);
  e.next();
}, "notes");

routerAdd("POST", "/api/notes-make", (e) => {
  const note = new Record($app.findCollectionByNameOrId("notes"), { text: e.requestInfo().body.text });
  $app.save(note);
  return e.json(201, { id: note.id });
});

routerAdd("GET", "/api/notes-ping", (e) => e.string(200, "pong"));
routerAdd("GET", "/api/notes-spin", (e) => { for (;;) {} });
`;

// The time limit leaves room for a loaded CI machine: 16 writes in a row, each spawning or reusing a
// worker for its nested hook, all count against the route handlers' limit.
describe('pb_hooks: handlers at once', () => {
  let server: TestServer;
  let root: string;

  before(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'cairn-pbpool-'));
    mkdirSync(path.join(root, 'pb_hooks'));
    writeFileSync(path.join(root, 'pb_hooks', 'notes.pb.js'), APP);
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: path.join(root, 'pb_hooks'), CAIRN_HOOK_TIMEOUT_MS: '2000' } });
    await createCollection(server, { name: 'notes', fields: [{ name: 'text', type: 'text' }, { name: 'seen', type: 'number' }] });
  });
  after(async () => {
    await server?.close();
    rmSync(root, { recursive: true, force: true });
  });

  test('many concurrent routes whose saves run record hooks all answer (nested handlers never wait in line)', async () => {
    const replies = await Promise.all(Array.from({ length: 16 }, (_, i) => server.request('POST', '/api/notes-make', { body: { text: `n${i}` } })));
    for (const r of replies) assert.equal(r.status, 201, r.text);
    const list = await server.admin('GET', '/api/collections/notes/records?perPage=50');
    assert.equal(list.body.totalItems, 16);
  });

  test('more runaway handlers than workers: each answers 503, the line drains, the server answers meanwhile', async () => {
    const spins = Array.from({ length: 3 }, () => server.request('GET', '/api/notes-spin'));
    const health = await server.request('GET', '/api/health');
    assert.equal(health.status, 200);
    const ping = server.request('GET', '/api/notes-ping');
    for (const r of await Promise.all(spins)) assert.equal(r.status, 503, r.text);
    const pong = await ping;
    assert.equal(pong.status, 200, pong.text);
    assert.equal(pong.text, 'pong');
  });
});
