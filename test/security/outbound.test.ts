import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Security invariant "outbound requests refuse link-local and cloud metadata addresses" (API contract
 * §20, issue 36). Saving a trigger, cron job or workflow step whose URL names such a host is a 400 on
 * that URL; a target that was saved anyway (allowed then, refused now) fails every attempt without
 * connecting, logged saying why. Loopback stays allowed (the control receiver below). The check after
 * DNS resolution is src/lib/outbound.test.ts (the sandbox has no DNS to point a name at 169.254.x).
 */
const targets = [
  'http://169.254.169.254/latest/meta-data/iam/security-credentials/',
  'http://metadata.google.internal/computeMetadata/v1/',
  'http://[fe80::1]/x',
  'http://[::ffff:169.254.169.254]/',
  'http://2852039166/',
  'http://[fd00:ec2::254]/latest/',
];
const ALLOW_ALL = '169.254.0.0/16,fe80::/10,fd00:ec2::254,metadata.google.internal';
const ENV = { CAIRN_WEBHOOK_BACKOFF_MS: '20', CAIRN_WEBHOOK_MAX_ATTEMPTS: '2', CAIRN_WEBHOOK_TIMEOUT_MS: '1000' };

describe('saving a webhook target refuses link-local and metadata hosts', () => {
  let server: TestServer;

  before(async () => {
    server = await startServer({ env: ENV });
  });
  after(async () => {
    await server.close();
  });

  test('collection triggers, on create and on update', async () => {
    const triggers = targets.map((url) => ({ action: 'create', url }));
    const created = await server.admin('POST', '/api/collections', { body: { name: 'hooked', fields: [{ name: 'title', type: 'text' }], options: { triggers } } });
    assert.equal(created.status, 400, created.text);
    targets.forEach((url, i) => {
      const problem = created.body.data.options.triggers[i].url;
      assert.equal(problem.code, 'validation_url_not_allowed', url);
      assert.match(problem.message, /metadata address/, url);
    });
    await createCollection(server, { name: 'plain', fields: [{ name: 'title', type: 'text' }] });
    const patched = await server.admin('PATCH', '/api/collections/plain', { body: { options: { triggers: [{ action: 'update', url: 'http://127.0.0.1:9/ok' }, { action: 'update', url: targets[0] }] } } });
    assert.equal(patched.status, 400, patched.text);
    assert.deepEqual(Object.keys(patched.body.data.options.triggers), ['1']);
    assert.equal((await server.admin('GET', '/api/collections/plain')).body.options.triggers, undefined);
  });

  test('cron jobs, on create and on update', async () => {
    const created = await server.admin('POST', '/api/webhooks/cron', { body: { name: 'creds', schedule: '@every 1h', url: targets[1] } });
    assert.equal(created.status, 400, created.text);
    assert.equal(created.body.data.url.code, 'validation_url_not_allowed');
    const job = await server.admin('POST', '/api/webhooks/cron', { body: { name: 'fine', schedule: '@every 1h', url: 'http://127.0.0.1:9/ok' } });
    assert.equal(job.status, 200, job.text);
    const patched = await server.admin('PATCH', `/api/webhooks/cron/${job.body.id}`, { body: { url: targets[4] } });
    assert.equal(patched.status, 400, patched.text);
    assert.equal(patched.body.data.url.code, 'validation_url_not_allowed');
    assert.equal((await server.admin('GET', `/api/webhooks/cron/${job.body.id}`)).body.url, 'http://127.0.0.1:9/ok');
  });

  test('workflow webhook steps', async () => {
    const res = await server.admin('POST', '/api/workflows', { body: { name: 'leak', steps: [{ type: 'webhook', url: targets[2] }] } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.data.steps[0].url.code, 'validation_url_not_allowed');
  });

  test('a host name is not resolved when saved (delivery checks the address)', async () => {
    const res = await server.admin('POST', '/api/webhooks/cron', { body: { name: 'by-name', schedule: '@every 1h', url: 'http://hooks.example.invalid/x' } });
    assert.equal(res.status, 200, res.text);
  });
});

describe('CAIRN_OUTBOUND_ALLOW lets a refused host be saved; deliveries follow the running instance', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-outbound-'));
  let receiver: Receiver;

  before(async () => {
    receiver = await startReceiver();
  });
  after(async () => {
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  test('saved while allowed; once the allow list drops them, every attempt fails without connecting; loopback is delivered', async () => {
    const allowed = await startServer({ dir, env: { ...ENV, CAIRN_OUTBOUND_ALLOW: ALLOW_ALL } });
    try {
      const triggers = [...targets.map((url) => ({ action: 'create', url, method: 'POST' })), { action: 'create', url: `${receiver.url}/hook`, method: 'POST' }];
      await createCollection(allowed, { name: 'events', fields: [{ name: 'title', type: 'text' }], options: { triggers } });
    } finally {
      await allowed.close();
    }

    const server = await startServer({ dir, env: ENV });
    try {
      assert.equal((await server.admin('POST', '/api/collections/events/records', { body: { title: 'hello' } })).status, 200);
      await receiver.waitForRequests(1);
      const logs = await waitFor(
        async () => {
          const res = await server.admin('GET', '/api/webhooks/logs?collection=events&perPage=500');
          const failed = res.body.items.filter((l: any) => l.status !== 'success');
          return failed.length >= targets.length * 2 && res.body.items;
        },
        { what: 'every refused attempt logged' },
      );
      for (const url of targets) {
        const attempts = logs.filter((l: any) => l.url === url);
        assert.ok(attempts.length >= 1, `no log for ${url}: ${JSON.stringify(logs.map((l: any) => l.url))}`);
        for (const a of attempts) {
          assert.notEqual(a.status, 'success');
          assert.match(a.error, /link-local|metadata/, `${url}: ${a.error}`);
        }
      }
      assert.equal(receiver.requests.length, 1);
    } finally {
      await server.close();
    }
  });
});
