// through-tsx: a TypeScript hook it loads imports `cairn`, which must be this process's own src/index.ts (a bundle holds a copy)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, request, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';
import { type AppDir, appDir } from './app-dir.ts';

const ROUTES = `
import { BadRequestError, NotFoundError, defineHooks, requireAuth, requireSuperuser } from 'cairn';

export default defineHooks((app) => {
  app.routerAdd('GET', '/api/hello/{name}', (e) => {
    e.json(200, { hello: e.pathValue('name'), q: e.query.get('q'), db: e.db, who: e.auth?.collectionName ?? null });
  });
  app.routerAdd('GET', '/files/{path...}', (e) => e.string(200, 'file ' + e.pathValue('path')));
  app.routerAdd('POST', '/api/echo', async (e) => e.json(201, { body: await e.bindBody(), type: e.headers['content-type'] ?? null }));
  app.routerAdd('GET', '/api/mine', (e) => e.json(200, { id: e.auth!.id }), requireAuth('users'));
  app.routerAdd('GET', '/api/admin-only', (e) => e.noContent(), requireSuperuser());
  app.routerAdd('GET', '/api/go', (e) => e.redirect(302, '/api/hello/redirected'));
  app.routerAdd('GET', '/api/bad', () => { throw new BadRequestError('Nope.', { x: { code: 'validation_nope', message: 'No.' } }); });
  app.routerAdd('GET', '/api/missing', () => { throw new NotFoundError(); });
  app.routerAdd('GET', '/api/crash', () => { throw Object.assign(new Error('db password is hunter2'), { statusCode: 418 }); });
  app.routerAdd('GET', '/api/returns', () => ({ returned: true }));
  app.routerAdd('GET', '/api/silent', () => undefined);
  app.routerAdd('GET', '/api/stats', async (e) => {
    const records = e.app.records(e.db);
    const all = await records.find('notes', { sort: '-n', limit: 2 });
    const hit = await records.findFirst('notes', 'title = {:t}', { t: "it's \\\\ 'quoted'" });
    e.json(200, { top: all.map((r) => r.n), hit: hit.n, count: await records.count('notes', 'n > {:min}', { min: 1 }) });
  });
  app.routerAdd('GET', '/api/injection', async (e) => {
    // A parameter is a value, never filter syntax.
    const n = await e.app.records(e.db).count('notes', 'title = {:t}', { t: e.query.get('t') });
    e.json(200, { n });
  });
  app.routerAdd('POST', '/api/checkout', async (e) => {
    const records = e.app.records(e.db);
    await records.transaction(async (tx) => {
      await tx.create('notes', { title: 'in a transaction', n: 100 });
      throw new BadRequestError('Rolled back.');
    });
  });
  app.routerAdd('POST', '/api/notify', async (e) => {
    const { to } = await e.bindBody<{ to: string }>();
    await e.app.mail.send({ to, subject: 'Your order', text: 'It ships today.', html: '<p>It ships today.</p>' });
    e.noContent();
  });
  app.routerAdd('GET', '/api/timed', async (e) => {
    e.json(200, { n: (await e.app.records(e.db).find('notes', { offset: 1 })).length });
  });
});
`;

describe('hooks: routes', () => {
  let app: AppDir;
  let server: TestServer;
  let inbox: Inbox;

  before(async () => {
    app = appDir({ 'routes.ts': ROUTES });
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_HOOKS_DIR: app.hooks, CAIRN_SMTP_URL: inbox.url } });
    await createCollection(server, { name: 'notes', fields: [{ name: 'title', type: 'text' }, { name: 'n', type: 'number' }] });
    for (const [title, n] of [
      ['a', 1],
      ["it's \\ 'quoted'", 2],
      ['c', 3],
    ] as const) {
      await server.admin('POST', '/api/collections/notes/records', { body: { title, n } });
    }
  });
  after(async () => {
    await server?.close();
    await inbox?.close();
    app?.remove();
  });

  test('path values, the rest of a path, the query and the database', async () => {
    const res = await server.request('GET', '/api/hello/ann%20lee?q=1');
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { hello: 'ann lee', q: '1', db: 'main', who: null });
    const file = await server.request('GET', '/files/a/b/c.txt');
    assert.equal(file.status, 200);
    assert.equal(file.text, 'file a/b/c.txt');
    assert.match(String(file.headers.get('content-type')), /^text\/plain/);
    const unknownDb = await server.request('GET', '/api/hello/x', { db: 'nosuch' });
    assert.equal(unknownDb.status, 404);
    assert.equal(unknownDb.body.message, 'Database "nosuch" not found.');
    assert.equal((await server.request('GET', '/api/hello')).status, 404, 'a path no route answers is the usual 404');
    const head = await fetch(`${server.url}/api/hello/x`, { method: 'HEAD' });
    assert.equal(head.status, 200, 'HEAD is served by the GET route');
    assert.equal((await server.request('DELETE', '/api/hello/x')).status, 404);
  });

  test('bodies: JSON, url-encoded forms and multipart fields', async () => {
    const json = await server.request('POST', '/api/echo', { body: { a: 1 } });
    assert.equal(json.status, 201);
    assert.deepEqual(json.body.body, { a: 1 });
    const form = await server.request('POST', '/api/echo', { raw: 'a=1&b=two', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    assert.deepEqual(form.body.body, { a: '1', b: 'two' });
    const data = new FormData();
    data.set('x', 'y');
    const multi = await server.request('POST', '/api/echo', { raw: data });
    assert.deepEqual(multi.body.body, { x: 'y' });
    const malformed = await server.request('POST', '/api/echo', { raw: '{"a":', headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
  });

  test('callers: requireAuth and requireSuperuser; a bad token is a 401 as everywhere', async () => {
    const user = await createUser(server, 'route-user@example.com');
    assert.equal((await server.request('GET', '/api/mine')).status, 401);
    const mine = await server.request('GET', '/api/mine', { token: user.token });
    assert.deepEqual(mine.body, { id: user.id });
    assert.equal((await server.admin('GET', '/api/mine')).status, 403, 'a superuser is not a users record');
    assert.equal((await server.request('GET', '/api/admin-only', { token: user.token })).status, 403);
    assert.equal((await server.admin('GET', '/api/admin-only')).status, 204);
    const who = await server.request('GET', '/api/hello/me', { token: user.token });
    assert.equal(who.body.who, 'users');
    assert.equal((await server.request('GET', '/api/hello/me', { token: 'forged.token.value' })).status, 401);
    assert.equal((await server.request('GET', '/api/hello/me', { token: user.token, db: 'main' })).status, 200);
  });

  test('answers: redirect, no content, returned values; errors in the contract shape', async () => {
    const go = await fetch(`${server.url}/api/go`, { redirect: 'manual' });
    assert.equal(go.status, 302);
    assert.equal(go.headers.get('location'), '/api/hello/redirected');
    assert.deepEqual((await server.request('GET', '/api/returns')).body, { returned: true });
    assert.equal((await server.request('GET', '/api/silent')).status, 204);
    const bad = await server.request('GET', '/api/bad');
    assert.deepEqual(bad.body, { status: 400, code: 400, message: 'Nope.', data: { x: { code: 'validation_nope', message: 'No.' } } });
    assert.equal((await server.request('GET', '/api/missing')).status, 404);
    const crash = await server.request('GET', '/api/crash');
    assert.equal(crash.status, 500, "a thrown library error's own status is not trusted");
    assert.deepEqual(crash.body, { status: 500, code: 500, message: 'Something went wrong while processing your request.', data: {} });
    assert.ok(!crash.text.includes('hunter2'));
  });

  test('data access: find, findFirst and count with {:param} binding, transactions', async () => {
    const stats = await server.request('GET', '/api/stats');
    assert.equal(stats.status, 200, stats.text);
    assert.deepEqual(stats.body, { top: [3, 2], hit: 2, count: 2 });
    for (const attack of ["x' || 1=1 || title='", "') OR 1=1 --", '{:t}', 'a" || title != "']) {
      const res = await server.request('GET', `/api/injection?t=${encodeURIComponent(attack)}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.n, 0, attack);
    }
    const rolled = await server.request('POST', '/api/checkout');
    assert.equal(rolled.status, 400);
    const count = await server.admin('GET', "/api/collections/notes/records?filter=(n=100)");
    assert.equal(count.body.totalItems, 0, 'the transaction rolled back');
    assert.deepEqual((await server.request('GET', '/api/timed')).body, { n: 2 });
  });

  test('app.mail.send goes through the configured SMTP server, from the instance sender', async () => {
    const res = await server.request('POST', '/api/notify', { body: { to: 'buyer@example.com' } });
    assert.equal(res.status, 204);
    const mail = await inbox.next('buyer@example.com', /Your order/);
    assert.match(mail.text, /It ships today/);
    assert.match(mail.from, /no-reply@cairn\.local/);
  });

  test('CORS applies to hook routes as to every route', async () => {
    const res = await request(server.url, 'GET', '/api/hello/x', { headers: { origin: 'https://app.example.com' } });
    assert.equal(res.headers.get('access-control-allow-origin'), '*');
  });

  test('the hooks screen lists files, handlers, routes and cron jobs (administrators only)', async () => {
    assert.equal((await server.request('GET', '/api/hooks')).status, 401);
    const status = await server.admin('GET', '/api/hooks');
    assert.equal(status.status, 200);
    assert.equal(status.body.files.length, 1);
    assert.ok(status.body.files[0].endsWith('routes.ts'));
    assert.ok(status.body.routes.some((r: { method: string; path: string }) => r.method === 'GET' && r.path === '/api/hello/{name}'));
    assert.equal(status.body.lastError, null);
  });
});
