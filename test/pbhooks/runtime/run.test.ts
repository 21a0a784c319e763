// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
// Loading hook files and running what they registered: registrations, event objects, deferred
// e.next(), routes with middlewares, request parts, mail, $os, $template, the logger, migrate().
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { generation } from '../../../src/pbhooks/runtime/loader.ts';
import { cookiesOf, headerGetter } from '../../../src/pbhooks/runtime/request.ts';
import { bundleWorker } from '../../../src/pbhooks/runtime/bundle.ts';
import { testHost } from './host.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'pbrt-'));
function file(name: string, src: string): string {
  const f = path.join(dir, name);
  writeFileSync(f, src);
  return f;
}

describe('registrations and loader', () => {
  test('events, routes and cron register in order; (collection, handler) is accepted too', () => {
    const h = testHost();
    h.runtime.evaluate(file('a.pb.js', `onRecordCreate((e) => e.next(), 'posts'); onRecordUpdate('posts', (e) => e.next()); routerAdd('get', '/x', (e) => e.string(200, 'x')); cronAdd('j', '* * * * *', () => {})`));
    assert.deepEqual(
      h.runtime.regs.map((r) => [r.kind, r.event ?? r.path ?? r.name, r.collections ?? r.method ?? r.schedule]),
      [['event', 'onRecordCreate', ['posts']], ['event', 'onRecordUpdate', ['posts']], ['route', '/x', 'GET'], ['cron', 'j', '* * * * *']],
    );
  });
  test('a v0.22 file is told apart by what it calls', () => {
    assert.equal(generation(`onRecordBeforeCreateRequest((e) => {})`), 22);
    assert.equal(generation(`onRecordCreateRequest((e) => { e.next() })`), 23);
  });
  test('require loads a local module once; a package name is refused', () => {
    file('lib.js', `module.exports = { n: (globalThis.loads = (globalThis.loads || 0) + 1) }`);
    const h = testHost({}, { hooksDir: dir });
    h.runtime.evaluate(file('b.pb.js', `a = require('./lib.js').n; b = require('./lib').n; try { require('lodash') } catch (e) { refused = e.message }`));
    assert.deepEqual([h.eval('a'), h.eval('b'), h.eval('loads')], [1, 1, 1]);
    assert.match(h.eval('refused'), /only local modules/);
  });
  test('migrate() reaches the host when it asks for it', () => {
    const got: unknown[] = [];
    const h = testHost({}, { migrate: (up, down) => got.push(typeof up, typeof down) });
    h.runtime.evaluate(file('1_init.js', `migrate((app) => {}, (app) => {})`));
    assert.deepEqual(got, ['function', 'function']);
  });
});

describe('events', () => {
  test('a record event gives the handler its record; e.next() sends the changes, deferred until the end', () => {
    const h = testHost({ next: (changes) => ({ id: 'r1', ...changes, collectionId: 'c1' }) });
    h.runtime.evaluate(file('c.pb.js', `onRecordCreate((e) => { e.record.set('title', e.record.get('title').toUpperCase()); e.next() }, 'posts')`));
    const out = h.runtime.run(0, { collection: { id: 'c1', name: 'posts' }, record: { title: 'hi' }, isNew: true });
    assert.deepEqual(out, { nextCalled: true, changes: { title: 'HI' }, deferredNext: true });
    assert.equal(h.calls.length, 0);
  });
  test('reading the record after e.next() runs the write first', () => {
    const h = testHost({ next: () => ({ id: 'r1', title: 'stored', collectionId: 'c1' }) });
    h.runtime.evaluate(file('d.pb.js', `onRecordCreate((e) => { e.next(); seen = e.record.get('title') })`));
    const out = h.runtime.run(0, { collection: { name: 'posts' }, record: { title: 'hi' } });
    assert.equal(h.eval('seen'), 'stored');
    assert.equal(out.deferredNext, undefined);
    assert.deepEqual(h.calls.map((c) => c.op), ['next']);
  });
  test('a handler with try runs e.next() at once', () => {
    const h = testHost({ next: () => ({ id: 'r1' }) });
    h.runtime.evaluate(file('e.pb.js', `onRecordCreate((e) => { try { e.next() } catch (err) { throw err } })`));
    h.runtime.run(0, { collection: { name: 'posts' }, record: {} });
    assert.deepEqual(h.calls.map((c) => c.op), ['next']);
  });
  test('a mail event may change the message', () => {
    const h = testHost();
    h.runtime.evaluate(file('m.pb.js', `onMailerSend((e) => { e.message.subject = 'Re: ' + e.message.subject })`));
    assert.equal(h.runtime.run(0, { kind: 'mail', message: { subject: 'x' } }).message.subject, 'Re: x');
  });
});

describe('routes and requests', () => {
  test('middlewares run in order and a $apis guard answers 401 without a signed-in record', () => {
    const h = testHost();
    h.runtime.evaluate(file('r.pb.js', `routerUse((e) => { e.response.header().set('X-A', '1'); return e.next() }); routerAdd('GET', '/me', (e) => e.json(200, { q: e.request.url.query().get('q'), h: e.request.header.get('X-Test') }), $apis.requireAuth())`));
    assert.throws(() => h.runtime.run(0, { method: 'GET', path: '/me', query: 'q=1', headers: {} }), (err: any) => err.status === 401);
    const out = h.runtime.run(0, { method: 'GET', path: '/me', query: 'q=1', headers: { 'x-test': 'v' }, auth: { id: 'u1', collectionName: 'users' } });
    assert.equal(out.answer.status, 200);
    assert.deepEqual(JSON.parse(out.answer.body), { q: '1', h: 'v' });
    assert.deepEqual(out.headers, { 'x-a': '1' });
  });
  test('headers and cookies read as Go gives them', () => {
    assert.equal(headerGetter({ 'x-a': ['1', '2'] }).get('X-A'), '1');
    assert.deepEqual(cookiesOf({ cookie: 'a=1; b="two"' }), [{ name: 'a', value: '1' }, { name: 'b', value: 'two' }]);
  });
});

describe('globals', () => {
  test('$os writes files; $template escapes; the logger and console reach the host', () => {
    const h = testHost();
    const out = path.join(dir, 'out.txt');
    h.eval(`$os.writeFile(${JSON.stringify(out)}, 'data'); $app.logger().info('saved', 'n', 2); console.log('a', { b: 1 })`);
    assert.equal(readFileSync(out, 'utf8'), 'data');
    assert.deepEqual(h.logs, [{ level: 'info', msg: 'saved', data: { n: 2 } }, { level: 'info', msg: 'a {"b":1}', data: {} }]);
    assert.equal(h.eval(`$template.loadString('<p>{{.x}}</p>').render({ x: '<b>' })`), '<p>&lt;b&gt;</p>');
  });
  test('$mails and $http.send are host calls', () => {
    const h = testHost({ mails: () => null, http: () => ({ statusCode: 200, json: { ok: true } }) });
    h.eval(`r = new Record(new Collection({ name: 'users' })); r.set('id', 'u1'); $mails.sendRecordVerification($app, r)`);
    assert.equal(h.eval(`$http.send({ url: 'http://x' }).json.ok`), true);
    assert.deepEqual(h.calls[0], { op: 'mails', args: ['verification', 'users', 'u1'] });
    assert.equal(h.calls[1].args[0].method, 'GET');
  });
  test('the worker bundle is one script with no import statement', () => {
    const script = bundleWorker(path.resolve('src/pbhooks/runtime/worker-entry.ts'));
    assert.doesNotMatch(script, /^import /m);
    assert.match(script, /require\("node:worker_threads"\)/);
  });
});
