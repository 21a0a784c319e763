import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// Today's API (≥ 0.23): e.next(), $app.find*, e.requestInfo(), {name} path values.
const MODERN = `
onRecordCreate((e) => {
  const title = e.record.getString("title");
  if (title === "forbidden") throw new BadRequestError("No forbidden titles.");
  e.record.set("slug", title.toLowerCase().replace(/ /g, "-"));
  e.next();
  if (title === "boom after") throw new Error("after the write");
}, "tasks");

onRecordCreateRequest((e) => {
  e.record.set("source", "api");
  e.next();
}, "tasks");

onRecordAfterCreateSuccess((e) => {
  const log = new Record($app.findCollectionByNameOrId("events"));
  log.set("what", "created " + e.record.id);
  $app.save(log);
  e.next();
}, "tasks");

routerAdd("GET", "/api/tasks-count/{prefix}", (e) => {
  const prefix = e.request.pathValue("prefix");
  const found = $app.findRecordsByFilter("tasks", "title ~ {:p}", "-created", 10, 0, { p: prefix });
  const first = found.length ? $app.findRecordById("tasks", found[0].id) : null;
  const rows = arrayOf(new DynamicModel({ title: "", n: 0 }));
  $app.db().newQuery("SELECT title, 7 AS n FROM tasks WHERE title LIKE {:p} ORDER BY title").bind({ p: prefix + "%" }).all(rows);
  const who = e.auth ? e.auth.collectionName : null;
  return e.json(200, { count: found.length, first: first && first.getString("slug"), rows, q: e.request.url.query().get("q"), who, info: e.requestInfo().query });
});

routerAdd("POST", "/api/tasks-make", (e) => {
  const body = e.requestInfo().body;
  const rec = new Record($app.findCollectionByNameOrId("tasks"), { title: body.title });
  $app.save(rec);
  e.response.header().set("X-Made", rec.id);
  return e.json(201, { id: rec.id, slug: rec.get("slug"), source: rec.get("source") });
});

routerAdd("GET", "/api/page", (e) => e.html(200, $template.loadString("<b>{{.name}}</b>").render({ name: "<x>" })));
routerAdd("GET", "/api/admins-only", (e) => e.noContent(204), $apis.requireSuperuserAuth());
routerAdd("GET", "/api/spin", (e) => { while (true) {} });

cronAdd("tally", "0 3 * * *", () => {
  const n = $app.findRecordsByFilter("tasks", "id != ''").length;
  const rec = new Record($app.findCollectionByNameOrId("events"));
  rec.set("what", "tally " + n);
  $app.save(rec);
});

routerAdd("GET", "/api/proxy", (e) => {
  const lib = require(\`\${__hooks}/lib.js\`);
  const port = e.request.header.get("X-Port");
  const res = $http.send({ url: "http://127.0.0.1:" + port + "/api/health", method: "GET" });
  return e.json(200, { status: res.statusCode, ok: res.json && res.json.code, greet: lib.greet("pb"), sha: $security.sha256("a").slice(0, 8) });
});
`;

// onBootstrap (0.23) and onAfterBootstrap (0.22) run once the app serves.
const BOOT = `
onBootstrap((e) => {
  e.next();
  $app.db().newQuery("CREATE TABLE IF NOT EXISTS boot_marks (what TEXT)").execute();
  $app.db().newQuery("INSERT INTO boot_marks (what) VALUES ({:w})").bind({ w: "modern" }).execute();
});
onAfterBootstrap((e) => {
  $app.db().newQuery("CREATE TABLE IF NOT EXISTS boot_marks (what TEXT)").execute();
  $app.db().newQuery("INSERT INTO boot_marks (what) VALUES ({:w})").bind({ w: "legacy" }).execute();
});
routerAdd("GET", "/api/boot-marks", (e) => {
  const rows = arrayOf(new DynamicModel({ what: "" }));
  $app.db().newQuery("SELECT what FROM boot_marks ORDER BY what").all(rows);
  return e.json(200, rows.map((r) => r.what));
});
`;

// Mail as PocketBase apps send it.
const MAIL = `
routerAdd("POST", "/api/notify", (e) => {
  const body = e.requestInfo().body;
  const message = new MailerMessage({
    from: { address: $app.settings().meta.senderAddress, name: $app.settings().meta.senderName },
    to: [{ address: body.to }],
    subject: "Hello " + body.name,
    html: $template.loadString("<p>Hi {{.name}}</p>").render({ name: body.name }),
  });
  $app.newMailClient().send(message);
  return e.noContent(204);
});
`;

const LIB = `module.exports = { greet: (name) => "hello " + name };`;

// v0.22: onRecordBefore*Request, $app.dao(), echo's c.json, :id path params.
const LEGACY = `
onRecordBeforeUpdateRequest((e) => {
  const n = e.record.getInt("n");
  if (n < 0) throw new BadRequestError("n must not be negative");
  e.record.set("n", n * 10);
}, "tasks");

routerAdd("GET", "/legacy/tasks/:id", (c) => {
  const id = c.pathParam("id");
  const rec = $app.dao().findRecordById("tasks", id);
  return c.json(200, { title: rec.getString("title"), n: rec.getInt("n"), q: c.queryParam("q") });
});

routerAdd("POST", "/legacy/rename/:id", (c) => {
  const data = $apis.requestInfo(c).data;
  const rec = $app.dao().findRecordById("tasks", c.pathParam("id"));
  rec.set("title", data.title);
  $app.dao().saveRecord(rec);
  return c.json(200, { ok: true });
});
`;

describe('pb_hooks: both API generations', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    pb = pbDir({ 'main.pb.js': MODERN, 'old.pb.js': LEGACY, 'boot.pb.js': BOOT, 'mail.pb.js': MAIL, 'lib.js': LIB });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir, CAIRN_HOOK_TIMEOUT_MS: '1500' } });
    await createCollection(server, { name: 'tasks', fields: [{ name: 'title', type: 'text' }, { name: 'slug', type: 'text' }, { name: 'source', type: 'text' }, { name: 'n', type: 'number' }] });
    await createCollection(server, { name: 'events', fields: [{ name: 'what', type: 'text' }] });
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  test('record hooks change the record, *Request events fire for API requests only, after-success hooks write', async () => {
    const res = await server.admin('POST', '/api/collections/tasks/records', { body: { title: 'Write Tests' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.slug, 'write-tests');
    assert.equal(res.body.source, 'api');
    const made = await server.admin('POST', '/api/tasks-make', { body: { title: 'From Route' } });
    assert.equal(made.status, 201, made.text);
    assert.equal(made.body.slug, 'from-route');
    assert.equal(made.body.source, '', 'a save from a route is no API request');
    assert.equal(made.headers.get('x-made'), made.body.id);
    const events = await server.admin('GET', '/api/collections/events/records');
    assert.equal(events.body.items.length, 2);
  });

  test('a throw rolls the write back and answers 400', async () => {
    const bad = await server.admin('POST', '/api/collections/tasks/records', { body: { title: 'forbidden' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.message, 'No forbidden titles.');
    const late = await server.admin('POST', '/api/collections/tasks/records', { body: { title: 'boom after' } });
    assert.equal(late.status, 400);
    const list = await server.admin('GET', '/api/collections/tasks/records', { query: { filter: 'title = "boom after"' } } as any);
    const all = await server.admin('GET', '/api/collections/tasks/records?perPage=100');
    assert.equal(all.body.items.filter((r: any) => r.title === 'boom after' || r.title === 'forbidden').length, 0, list.text);
  });

  test('routes read with $app, raw SQL, path values, query and auth', async () => {
    const res = await server.request('GET', '/api/tasks-count/Wr?q=1');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.count, 1);
    assert.equal(res.body.first, 'write-tests');
    assert.deepEqual(res.body.rows, [{ title: 'Write Tests', n: 7 }]);
    assert.equal(res.body.q, '1');
    assert.equal(res.body.who, null);
    assert.deepEqual(res.body.info, { q: '1' });
    const page = await server.request('GET', '/api/page');
    assert.equal(page.text, '<b>&lt;x&gt;</b>');
    assert.match(String(page.headers.get('content-type')), /^text\/html/);
    assert.equal((await server.request('GET', '/api/admins-only')).status, 401);
    assert.equal((await server.admin('GET', '/api/admins-only')).status, 204);
  });

  test('v0.22: before-request hooks, dao(), c.pathParam', async () => {
    const made = await server.admin('POST', '/api/collections/tasks/records', { body: { title: 'old', n: 1 } });
    const id = made.body.id;
    const up = await server.admin('PATCH', `/api/collections/tasks/records/${id}`, { body: { n: 4 } });
    assert.equal(up.status, 200, up.text);
    assert.equal(up.body.n, 40);
    const neg = await server.admin('PATCH', `/api/collections/tasks/records/${id}`, { body: { n: -1 } });
    assert.equal(neg.status, 400);
    const got = await server.request('GET', `/legacy/tasks/${id}?q=z`);
    assert.deepEqual(got.body, { title: 'old', n: 40, q: 'z' });
    const renamed = await server.request('POST', `/legacy/rename/${id}`, { body: { title: 'renamed' } });
    assert.equal(renamed.status, 200, renamed.text);
    const again = await server.request('GET', `/legacy/tasks/${id}`);
    assert.equal(again.body.title, 'renamed');
    assert.equal(again.body.n, 40, 'a save from a route fires no *Request hook');
    assert.equal((await server.request('GET', '/legacy/tasks/nope')).status, 404);
  });

  test('cron jobs, $http.send, require() of a local module, $security', async () => {
    const run = await server.admin('POST', '/api/hooks/cron/tally');
    assert.equal(run.status, 204, run.text);
    const events = await server.admin('GET', '/api/collections/events/records?perPage=100');
    assert.ok(events.body.items.some((r: any) => /^tally \d+$/.test(r.what)), events.text);
    const port = new URL(server.url).port;
    const res = await server.request('GET', '/api/proxy', { headers: { 'x-port': port } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.status, 200);
    assert.equal(res.body.greet, 'hello pb');
    assert.equal(res.body.sha, 'ca978112');
  });

  test('GET /api/hooks lists the pb_hooks files, handlers and routes', async () => {
    const res = await server.admin('GET', '/api/hooks');
    assert.equal(res.status, 200, res.text);
    assert.ok(res.body.files.some((f: string) => f.endsWith('main.pb.js')));
    assert.ok(res.body.handlers.some((h: any) => h.event === 'onRecordCreate' && h.source.endsWith('main.pb.js')));
    assert.ok(res.body.routes.some((r: any) => r.path === '/legacy/tasks/{id}'));
    assert.equal(res.body.pbDir, pb.dir);
  });

  test('MailerMessage through $app.newMailClient().send', async () => {
    const res = await server.request('POST', '/api/notify', { body: { to: 'ann@example.com', name: 'Ann' } });
    assert.equal(res.status, 204, res.text);
    const dir = path.join(server.dir, 'mail');
    const files = readdirSync(dir);
    const mail = files.map((f) => readFileSync(path.join(dir, f), 'utf8')).find((t) => t.includes('Hello Ann'));
    assert.ok(mail, files.join(', '));
    assert.match(mail!, /ann@example\.com/);
  });

  test('bootstrap handlers of both generations run once the app serves', async () => {
    const deadline = Date.now() + 5000;
    let marks: unknown;
    while (Date.now() < deadline) {
      const res = await server.request('GET', '/api/boot-marks');
      marks = res.body;
      if (res.status === 200 && Array.isArray(marks) && marks.length === 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.deepEqual(marks, ['legacy', 'modern']);
  });

  test('a handler that loops forever answers 503 and the server keeps answering', async () => {
    const started = Date.now();
    const spin = server.request('GET', '/api/spin');
    const meanwhile = await server.request('GET', '/api/health');
    assert.equal(meanwhile.status, 200);
    const res = await spin;
    assert.equal(res.status, 503);
    assert.ok(Date.now() - started < 5000);
    const after = await server.request('GET', '/api/tasks-count/Wr');
    assert.equal(after.status, 200);
  });
});
