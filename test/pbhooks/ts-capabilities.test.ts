// through-tsx: a TypeScript hook it loads imports `cairn`, which must be this process's own src/index.ts (a bundle holds a copy)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { type AppDir, appDir } from '../hooks/app-dir.ts';

// What §22 adds to TypeScript hooks: raw SQL, settings, the request in record events, e.html and headers.
const HOOKS = `
import { defineHooks } from 'cairn';

export default defineHooks((app) => {
  app.onRecordCreate(async (e) => {
    e.record.via = e.request.method === 'SYSTEM' ? 'code' : 'api:' + (e.request.headers['x-client'] ?? '');
    await e.next();
    await e.app.db(e.db).execute('UPDATE notes SET n = n + 1 WHERE id != {:id}', { id: e.record.id });
  }, 'notes');
  app.routerAdd('GET', '/api/raw', async (e) => {
    const rows = await e.app.db(e.db).all('SELECT [[title]] AS title, n FROM {{notes}} WHERE n >= {:min} ORDER BY title', { min: 0 });
    const one = await e.app.db(e.db).one('SELECT COUNT(*) AS c FROM notes');
    const settings = await e.app.settings();
    e.header('X-App', settings.meta.appName);
    e.json(200, { rows, c: Number(one?.c), ip: e.ip });
  });
  app.routerAdd('GET', '/api/page', (e) => e.html(200, '<p>hi</p>'));
  app.routerAdd('POST', '/api/seed', async (e) => {
    await e.app.records(e.db).create('notes', { title: 'seeded', n: 0 });
    e.noContent();
  });
});
`;

describe('TypeScript hooks: raw SQL, settings, the request in record events', () => {
  let app: AppDir;
  let server: TestServer;

  before(async () => {
    app = appDir({ 'h.ts': HOOKS });
    server = await startServer({ env: { CAIRN_HOOKS_DIR: app.hooks } });
    await createCollection(server, { name: 'notes', fields: [{ name: 'title', type: 'text' }, { name: 'n', type: 'number' }, { name: 'via', type: 'text' }] });
  });
  after(async () => {
    await server?.close();
    app?.remove();
  });

  test('record events see the request; app.db() runs in the write; settings; html and headers', async () => {
    const a = await server.admin('POST', '/api/collections/notes/records', { body: { title: 'a', n: 0 }, headers: { 'x-client': 'web' } });
    assert.equal(a.body.via, 'api:web');
    assert.equal((await server.request('POST', '/api/seed')).status, 204);
    const list = await server.admin('GET', '/api/collections/notes/records?sort=title');
    assert.deepEqual(list.body.items.map((r: any) => [r.title, r.via, r.n]), [['a', 'api:web', 1], ['seeded', 'code', 0]]);
    const raw = await server.request('GET', '/api/raw');
    assert.equal(raw.status, 200, raw.text);
    assert.deepEqual(raw.body.rows, [{ title: 'a', n: 1 }, { title: 'seeded', n: 0 }]);
    assert.equal(raw.body.c, 2);
    assert.equal(raw.body.ip, '127.0.0.1');
    assert.ok(raw.headers.get('x-app'));
    const page = await server.request('GET', '/api/page');
    assert.equal(page.text, '<p>hi</p>');
    assert.match(String(page.headers.get('content-type')), /^text\/html/);
  });
});
