import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { jwtVerify } from 'jose';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const ENV = { CAIRN_WEBHOOK_BACKOFF_MS: '50', CAIRN_WEBHOOK_TIMEOUT_MS: '30000' };

describe('cron jobs', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-cron-'));
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    server = await startServer({ dir, env: ENV });
    receiver = await startReceiver();
  });
  after(async () => {
    await server.close();
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const requestsTo = (p: string) => receiver.requests.filter((r) => r.path === p);

  async function createJob(body: Record<string, unknown>, db?: string) {
    const res = await server.admin('POST', '/api/webhooks/cron', { body, db });
    assert.equal(res.status, 200, res.text);
    return res.body;
  }

  describe('validation', () => {
    const base = { name: 'job', schedule: '* * * * *', url: 'http://127.0.0.1:9/x', method: 'POST' };
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['a schedule with four fields', { schedule: '* * * *' }, 'schedule'],
      ['a minute out of range', { schedule: '61 * * * *' }, 'schedule'],
      ['words', { schedule: 'every day' }, 'schedule'],
      ['an @every without a unit', { schedule: '@every 30' }, 'schedule'],
      ['an @every below one second', { schedule: '@every 500ms' }, 'schedule'],
      ['a bare @every', { schedule: '@every' }, 'schedule'],
      ['a schedule that is not text', { schedule: 5 }, 'schedule'],
      ['an unknown time zone', { timezone: 'Mars/Olympus_Mons' }, 'timezone'],
      ['a missing name', { name: '' }, 'name'],
      ['a non-http URL', { url: 'file:///etc/passwd' }, 'url'],
      ['an unknown method', { method: 'TRACE' }, 'method'],
      ['a bad secret', { secret: 'short' }, 'secret'],
      ['enabled as text', { enabled: 'true' }, 'enabled'],
    ];
    for (const [what, change, key] of cases) {
      test(`${what} is a 400`, async () => {
        const res = await server.admin('POST', '/api/webhooks/cron', { body: { ...base, ...change } });
        assert.equal(res.status, 400, res.text);
        assert.match(res.body.data[key].code, /^validation_/);
      });
    }

    test('a body that is not an object is a 400, and PATCH validates too', async () => {
      assert.equal((await server.admin('POST', '/api/webhooks/cron', { raw: '[1]', headers: { 'content-type': 'application/json' } })).status, 400);
      const job = await createJob({ ...base, enabled: false });
      const res = await server.admin('PATCH', `/api/webhooks/cron/${job.id}`, { body: { schedule: '* * *' } });
      assert.equal(res.status, 400);
      assert.equal((await server.admin('GET', `/api/webhooks/cron/${job.id}`)).body.schedule, '* * * * *');
    });

    test('is for administrators only', async () => {
      assert.equal((await server.request('GET', '/api/webhooks/cron')).status, 401);
      assert.equal((await server.request('POST', '/api/webhooks/cron', { body: base })).status, 401);
    });
  });

  test('CRUD: create, read, list, update, delete', async () => {
    const job = await createJob({ name: 'nightly', schedule: '0 3 * * *', timezone: 'Europe/Paris', url: `${receiver.url}/nightly`, method: 'post', headers: { 'X-Job': 'n' }, body: { kind: 'report' } });
    assert.deepEqual(
      { name: job.name, schedule: job.schedule, timezone: job.timezone, method: job.method, headers: job.headers, body: job.body, enabled: job.enabled, lastRunAt: job.lastRunAt },
      { name: 'nightly', schedule: '0 3 * * *', timezone: 'Europe/Paris', method: 'POST', headers: { 'x-job': 'n' }, body: { kind: 'report' }, enabled: true, lastRunAt: null },
    );
    // 03:00 in Paris is 01:00 or 02:00 UTC, depending on the season.
    assert.match(job.nextRunAt, /T0[12]:00:00\.000Z$/);

    const list = await server.admin('GET', '/api/webhooks/cron');
    assert.ok(list.body.items.some((j: any) => j.id === job.id));
    assert.equal(typeof list.body.totalItems, 'number');

    const patched = await server.admin('PATCH', `/api/webhooks/cron/${job.id}`, { body: { enabled: false } });
    assert.equal(patched.status, 200);
    assert.equal(patched.body.enabled, false);
    assert.equal(patched.body.nextRunAt, null);
    assert.equal(patched.body.schedule, '0 3 * * *');

    assert.equal((await server.admin('DELETE', `/api/webhooks/cron/${job.id}`)).status, 204);
    assert.equal((await server.admin('GET', `/api/webhooks/cron/${job.id}`)).status, 404);
    assert.equal((await server.admin('DELETE', `/api/webhooks/cron/${job.id}`)).status, 404);
  });

  test('a job every second fires at least twice in five seconds, each run logged', async () => {
    const job = await createJob({ name: 'tick', schedule: '* * * * * *', url: `${receiver.url}/tick`, method: 'POST' });
    await waitFor(() => requestsTo('/tick').length >= 2, { timeoutMs: 5000, what: 'two runs' });
    await server.admin('DELETE', `/api/webhooks/cron/${job.id}`);
    const [first] = requestsTo('/tick');
    assert.equal(first.json.event, 'cron.run');
    assert.deepEqual(first.json.job, { id: job.id, name: 'tick' });
    const { payload } = await jwtVerify(String(first.headers.authorization).slice(7), new TextEncoder().encode(server.services.secret));
    assert.equal(payload.evt, first.json.id);
    const logs = await waitFor(async () => {
      const res = await server.admin('GET', '/api/webhooks/logs?source=cron');
      const mine = res.body.items.filter((l: any) => l.name === 'tick');
      return mine.length >= 2 && mine;
    });
    assert.ok(logs.every((l: any) => l.source === 'cron' && l.status === 'success' && l.url === `${receiver.url}/tick`));
  });

  test('an @every macro runs at its interval, with the configured body, method and headers', async () => {
    const job = await createJob({ name: 'every', schedule: '@every 1s', url: `${receiver.url}/every`, method: 'PUT', headers: { 'X-Token': 'abc' }, body: { hello: 'world' } });
    assert.ok(Date.parse(job.nextRunAt) - Date.now() <= 1000);
    const [req] = await waitFor(() => requestsTo('/every').length >= 2 && requestsTo('/every'), { timeoutMs: 5000, what: 'two runs' });
    await server.admin('DELETE', `/api/webhooks/cron/${job.id}`);
    assert.equal(req.method, 'PUT');
    assert.equal(req.headers['x-token'], 'abc');
    assert.deepEqual(req.json, { hello: 'world' });
    const stored = await server.admin('GET', '/api/webhooks/logs?source=cron');
    assert.ok(stored.body.items.some((l: any) => l.name === 'every'));
  });

  test('runs of one job never overlap: while a run is unanswered, later turns are skipped', async () => {
    const slow = await startReceiver();
    try {
      slow.respond(() => 'hang');
      const job = await createJob({ name: 'slow', schedule: '* * * * * *', url: `${slow.url}/slow`, method: 'POST' });
      await waitFor(() => slow.hanging === 1, { what: 'the first run' });
      const firstRun = Date.parse((await server.admin('GET', `/api/webhooks/cron/${job.id}`)).body.lastRunAt);
      // Two more turns come and go.
      await waitFor(async () => Date.parse((await server.admin('GET', `/api/webhooks/cron/${job.id}`)).body.nextRunAt) >= firstRun + 3000, {
        timeoutMs: 6000,
        what: 'two later turns',
      });
      assert.equal(slow.requests.length, 1);
      assert.equal(Date.parse((await server.admin('GET', `/api/webhooks/cron/${job.id}`)).body.lastRunAt), firstRun);
      await server.admin('DELETE', `/api/webhooks/cron/${job.id}`);
    } finally {
      await slow.close();
    }
  });

  test('jobs of another database run there and log there', async () => {
    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'tenant' } })).status, 200);
    const job = await createJob({ name: 'tenant-tick', schedule: '@every 1s', url: `${receiver.url}/tenant`, method: 'POST' }, 'tenant');
    const [req] = await waitFor(() => requestsTo('/tenant').length >= 1 && requestsTo('/tenant'), { timeoutMs: 5000 });
    assert.equal(req.json.database, 'tenant');
    await waitFor(async () => (await server.admin('GET', '/api/webhooks/logs?source=cron', { db: 'tenant' })).body.totalItems >= 1);
    assert.equal((await server.admin('GET', `/api/webhooks/cron/${job.id}`)).status, 404, 'not visible from main');
    await server.admin('DELETE', `/api/webhooks/cron/${job.id}`, { db: 'tenant' });
  });

  test('jobs survive a restart and keep running', async () => {
    const job = await createJob({ name: 'durable', schedule: '@every 1s', url: `${receiver.url}/durable`, method: 'POST' });
    await server.close();
    const before = requestsTo('/durable').length;
    server = await startServer({ dir, env: ENV });
    const stored = await server.admin('GET', `/api/webhooks/cron/${job.id}`);
    assert.equal(stored.status, 200);
    assert.ok(stored.body.nextRunAt);
    await waitFor(() => requestsTo('/durable').length > before, { timeoutMs: 5000, what: 'a run after the restart' });
    await server.admin('DELETE', `/api/webhooks/cron/${job.id}`);
  });
});
