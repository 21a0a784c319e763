import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// A to-do app written for PocketBase ≥ 0.23: collections by type, date arithmetic on Go times,
// record queries with dbx, saves that skip validation in PocketBase.
const CURRENT = `
routerAdd("GET", "/gaps/auth-collections", (e) => {
  const list = $app.findCollectionsByType("auth");
  return e.json(200, list.map((c) => ({ id: c.id, name: c.name, type: c.type, isAuth: c.isAuth(), fields: c.fields.map((f) => f.name) })));
});

routerAdd("GET", "/gaps/dates", (e) => {
  const start = new DateTime("2024-01-31 10:20:30.000Z");
  const t = start.time();
  const day = 24 * 60 * 60 * 1000 * 1000 * 1000;
  const later = new DateTime(t.add(day));
  return e.json(200, {
    string: start.string(),
    unix: t.unix(),
    unixMilli: t.unixMilli(),
    dtUnix: start.unix(),
    nextMonth: new DateTime(t.addDate(0, 1, 0)).string(),
    lastYear: new DateTime(t.addDate(-1, 0, 1)).string(),
    plusDay: later.string(),
    chained: new DateTime(new DateTime(t.addDate(0, 0, 1)).time().add(-2 * 60 * 60 * 1e9)).string(),
    dtAddDate: start.addDate(1, 0, -1).string(),
    dtAdd: start.add(30 * 1e9).string(),
    rfc3339: t.format("2006-01-02T15:04:05Z07:00"),
    human: t.format("Mon Jan _2 2006, 3:04pm MST"),
    millis: t.format("15:04:05.000"),
    year: t.year(),
    month: t.month(),
    before: start.before(later),
    after: start.time().after(later.time()),
    sub: later.sub(start),
    zero: new DateTime("").isZero(),
    fromUnix: new DateTime(1700000000).string(),
    now: Math.abs(new DateTime().time().unix() - Math.floor(Date.now() / 1000)) < 5,
    asJSON: start,
  });
});

onRecordCreate((e) => {
  if (!e.record.getString("due")) e.record.set("due", new DateTime().time().addDate(0, 0, 7));
  if (e.record.getString("start")) e.record.set("remind", new DateTime(e.record.getString("start")).time().add(60 * 60 * 1e9));
  e.next();
}, "tasks");

routerAdd("GET", "/gaps/query", (e) => {
  const open = arrayOf(new Record());
  $app.recordQuery("tasks")
    .andWhere($dbx.hashExp({ done: false }))
    .andWhere($dbx.exp("priority >= {:min}", { min: Number(e.request.url.query().get("min") || 0) }))
    .orderBy("priority DESC")
    .limit(2)
    .offset(Number(e.request.url.query().get("skip") || 0))
    .all(open);
  const one = new Record();
  $app.recordQuery($app.findCollectionByNameOrId("tasks")).where($dbx.hashExp({ title: "b" })).one(one);
  const titles = arrayOf(new DynamicModel({ title: "" }));
  $app.recordQuery("tasks").where($dbx.like("title", "c").match(false, true)).all(titles);
  let missing = "";
  try {
    $app.recordQuery("tasks").where($dbx.hashExp({ title: "nope" })).one(new Record());
  } catch (err) {
    missing = String(err.message || err);
  }
  return e.json(200, {
    open: open.map((r) => ({ title: r.getString("title"), priority: r.get("priority"), isRecord: r instanceof Record, coll: r.collection().name })),
    one: { id: one.id, title: one.get("title"), priority: one.get("priority"), done: one.get("done"), coll: one.collection().name, isNew: one.isNew() },
    rows: titles.map((x) => x.title),
    missing,
  });
});

routerAdd("POST", "/gaps/novalidate", (e) => {
  const body = e.requestInfo().body;
  const record = new Record($app.findCollectionByNameOrId("tasks"));
  record.set("title", body.title);
  record.set("priority", 1);
  $app.saveNoValidate(record);
  return e.json(200, { id: record.id, title: record.getString("title"), due: record.getString("due") });
});
`;

// The same app's older routes, written for v0.22: forms and the dao.
const OLD = `
routerAdd("POST", "/gaps/form", (c) => {
  const collection = $app.dao().findCollectionByNameOrId("tasks");
  const record = new Record(collection);
  const form = new RecordUpsertForm($app, record);
  form.setDao($app.dao());
  form.loadData({ title: c.queryParam("title"), priority: Number(c.queryParam("priority") || 3), done: false });
  form.submit();
  return c.json(200, { id: record.id, title: record.getString("title"), priority: record.getInt("priority"), due: record.getString("due") });
});

routerAdd("POST", "/gaps/form/:id", (c) => {
  const record = $app.dao().findRecordById("tasks", c.pathParam("id"));
  const form = new RecordUpsertForm($app, record);
  form.loadData({ title: "renamed", done: true });
  let seen = "";
  form.submit((next) => (r) => {
    seen = r.getString("title");
    return next(r);
  });
  return c.json(200, { title: record.getString("title"), done: record.getBool("done"), seen });
});

routerAdd("POST", "/gaps/dao-save", (c) => {
  const record = new Record($app.dao().findCollectionByNameOrId("tasks"));
  record.set("title", "from the dao");
  $app.dao().saveRecord(record);
  return c.json(200, { id: record.id });
});
`;

describe('pb_hooks: APIs real apps use that Cairn lacked', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    pb = pbDir({ 'current.pb.js': CURRENT, 'old.pb.js': OLD });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
    await createCollection(server, { name: 'members', type: 'auth', fields: [{ name: 'nick', type: 'text' }] });
    await createCollection(server, {
      name: 'tasks',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'priority', type: 'number' },
        { name: 'done', type: 'bool' },
        { name: 'start', type: 'date' },
        { name: 'due', type: 'date' },
        { name: 'remind', type: 'date' },
      ],
    });
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  test('$app.findCollectionsByType("auth") gives the auth collections as Collection objects', async () => {
    const res = await server.request('GET', '/gaps/auth-collections');
    assert.equal(res.status, 200, res.text);
    const members = res.body.find((c: any) => c.name === 'members');
    assert.ok(members, res.text);
    assert.ok(members.id);
    assert.equal(members.isAuth, true);
    assert.ok(members.fields.includes('nick'), res.text);
    assert.ok(res.body.every((c: any) => c.type === 'auth'), res.text);
    assert.ok(!res.body.some((c: any) => c.name === 'tasks'));
  });

  test('DateTime and its time(): addDate, add, unix, unixMilli, format, back into DateTime', async () => {
    const res = await server.request('GET', '/gaps/dates');
    assert.equal(res.status, 200, res.text);
    const at = Date.UTC(2024, 0, 31, 10, 20, 30);
    assert.deepEqual(res.body, {
      string: '2024-01-31 10:20:30.000Z',
      unix: at / 1000,
      unixMilli: at,
      dtUnix: at / 1000,
      // Go's AddDate normalizes: January 31 plus a month is March 2 (2024 is a leap year).
      nextMonth: '2024-03-02 10:20:30.000Z',
      lastYear: '2023-02-01 10:20:30.000Z',
      plusDay: '2024-02-01 10:20:30.000Z',
      chained: '2024-02-01 08:20:30.000Z',
      dtAddDate: '2025-01-30 10:20:30.000Z',
      dtAdd: '2024-01-31 10:21:00.000Z',
      rfc3339: '2024-01-31T10:20:30Z',
      human: 'Wed Jan 31 2024, 10:20am UTC',
      millis: '10:20:30.000',
      year: 2024,
      month: 1,
      before: true,
      after: false,
      sub: 24 * 60 * 60 * 1e9,
      zero: true,
      fromUnix: '2023-11-14 22:13:20.000Z',
      now: true,
      asJSON: '2024-01-31 10:20:30.000Z',
    });
  });

  test('a Go time set on a record in a record hook is stored as the date', async () => {
    const res = await server.admin('POST', '/api/collections/tasks/records', { body: { title: 'a', priority: 1, start: '2024-05-01 08:00:00.000Z' } });
    assert.equal(res.status, 200, res.text);
    // Cairn answers dates in ISO 8601 (`T` between date and time).
    assert.equal(Date.parse(res.body.remind), Date.UTC(2024, 4, 1, 9), res.text);
    const due = Date.parse(res.body.due);
    assert.ok(Math.abs(due - (Date.now() + 7 * 864e5)) < 60_000, res.text);
  });

  test('RecordUpsertForm (v0.22): loadData, setDao, submit save through the record hooks and validation', async () => {
    const created = await server.request('POST', '/gaps/form?title=b&priority=3');
    assert.equal(created.status, 200, created.text);
    assert.equal(created.body.title, 'b');
    assert.equal(created.body.priority, 3);
    assert.ok(created.body.id);
    assert.ok(created.body.due, 'the record hook ran on the form\'s save');
    const stored = await server.admin('GET', `/api/collections/tasks/records/${created.body.id}`);
    assert.equal(stored.body.title, 'b');

    const updated = await server.request('POST', `/gaps/form/${created.body.id}`);
    assert.equal(updated.status, 200, updated.text);
    assert.deepEqual(updated.body, { title: 'renamed', done: true, seen: 'renamed' });
    const again = await server.admin('GET', `/api/collections/tasks/records/${created.body.id}`);
    assert.equal(again.body.title, 'renamed');
    assert.equal(again.body.done, true);

    // `title` is required: the form's save validates.
    const invalid = await server.request('POST', '/gaps/form?title=');
    assert.equal(invalid.status, 400, invalid.text);
    assert.ok(invalid.body.data?.title, invalid.text);
  });

  test('$app.saveNoValidate and dao.saveRecord save (validation still runs in Cairn)', async () => {
    const ok = await server.request('POST', '/gaps/novalidate', { body: { title: 'quick' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.title, 'quick');
    assert.ok(ok.body.id);
    assert.ok(ok.body.due, 'record hooks ran');
    const dao = await server.request('POST', '/gaps/dao-save');
    assert.equal(dao.status, 200, dao.text);
    const stored = await server.admin('GET', `/api/collections/tasks/records/${dao.body.id}`);
    assert.equal(stored.body.title, 'from the dao');
    const invalid = await server.request('POST', '/gaps/novalidate', { body: { title: '' } });
    assert.equal(invalid.status, 400, invalid.text);
  });

  test('$app.recordQuery: dbx conditions, order, limit, offset, all() into Records, one() with decoded values', async () => {
    // The form's "b" was renamed: this "b" is the only one (done: not among the open tasks).
    const seeded = await server.admin('POST', '/api/collections/tasks/records', { body: { title: 'b', priority: 7, done: true } });
    assert.equal(seeded.status, 200, seeded.text);
    for (const [title, priority, done] of [
      ['c1', 5, false],
      ['c2', 4, true],
      ['c3', 2, false],
    ] as const) {
      const res = await server.admin('POST', '/api/collections/tasks/records', { body: { title, priority, done } });
      assert.equal(res.status, 200, res.text);
    }
    // Open tasks now: a (1), b (renamed: done), quick (1), from the dao (0), c1 (5), c3 (2).
    const res = await server.request('GET', '/gaps/query?min=2');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.open, [
      { title: 'c1', priority: 5, isRecord: true, coll: 'tasks' },
      { title: 'c3', priority: 2, isRecord: true, coll: 'tasks' },
    ]);
    assert.deepEqual(res.body.one, { id: seeded.body.id, title: 'b', priority: 7, done: true, coll: 'tasks', isNew: false });
    assert.equal(res.body.missing, 'sql: no rows in result set');
    assert.deepEqual(res.body.rows.sort(), ['c1', 'c2', 'c3']);
    const skipped = await server.request('GET', '/gaps/query?min=1&skip=1');
    assert.deepEqual(
      skipped.body.open.map((r: any) => r.title),
      ['c3', skipped.body.open[1]?.title],
    );
    assert.ok(['a', 'quick'].includes(skipped.body.open[1]?.title), skipped.text);
  });
});
