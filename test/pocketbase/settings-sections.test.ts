import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type S3Server, startS3 } from '../helpers/s3.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';

describe("PocketBase's settings sections, stored and written through /api/settings", () => {
  let server: TestServer;
  let inbox: Inbox;
  let s3: S3Server;
  before(async () => {
    inbox = await startInbox();
    s3 = await startS3();
    // No CAIRN_SMTP_URL and local files: the stored sections are what is shown and tried.
    server = await startServer();
  });
  after(async () => {
    await server.close();
    await inbox.close();
    await s3.close();
  });

  test('every section is shown in PocketBase’s shape, defaults from the environment, no secret', async () => {
    const res = await server.admin('GET', '/api/settings');
    assert.equal(res.status, 200, res.text);
    for (const name of ['meta', 'smtp', 's3', 'backups', 'batch', 'logs', 'rateLimits', 'trustedProxy']) assert.ok(res.body[name], name);
    assert.equal(res.body.smtp.enabled, false);
    assert.equal(res.body.s3.enabled, false);
    assert.equal(res.body.batch.maxRequests, 50);
    assert.deepEqual(Object.keys(res.body.rateLimits).sort(), ['enabled', 'excludedIPs', 'rules']);
    assert.deepEqual(Object.keys(res.body.trustedProxy).sort(), ['headers', 'useLeftmostIP']);
    assert.deepEqual(res.body.superuserIPs, [], "PocketBase v0.39's whitelist, empty");
    assert.doesNotMatch(res.text, /secret|password/i);
  });

  test('secrets are written but never answered; an empty section changes nothing', async () => {
    const body = { meta: { appName: 'Sections' }, smtp: { password: 'smtp-pass-1' }, s3: { secret: 's3-secret-1' }, backups: { s3: { secret: 'backup-secret-1' } } };
    const res = await server.admin('PATCH', '/api/settings', { body });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.meta.appName, 'Sections');
    assert.doesNotMatch(res.text, /secret|password/i);
    assert.doesNotMatch((await server.admin('GET', '/api/settings')).text, /smtp-pass-1|s3-secret-1|backup-secret-1/);
    const unchanged = await server.admin('PATCH', '/api/settings', { body: { s3: {}, logs: {} } });
    assert.equal(unchanged.status, 200, unchanged.text);
    assert.equal(unchanged.body.meta.appName, 'Sections');
  });

  test('values bind over the stored ones; lists are replaced whole', async () => {
    const first = await server.admin('PATCH', '/api/settings', {
      body: { rateLimits: { rules: [{ label: '/api/', maxRequests: 100, duration: 10 }, { label: '*:auth', audience: '@guest', maxRequests: 5, duration: 60 }] }, logs: { maxDays: 9 } },
    });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.rateLimits.rules.length, 2);
    assert.deepEqual(first.body.rateLimits.rules[1], { label: '*:auth', audience: '@guest', duration: 60, maxRequests: 5 });
    const second = await server.admin('PATCH', '/api/settings', { body: { logs: { logIP: false } } });
    assert.equal(second.body.logs.maxDays, 9);
    assert.equal(second.body.logs.logIP, false);
    assert.equal(second.body.rateLimits.rules.length, 2);
  });

  test('problems are answered nested per section with PocketBase’s codes, and nothing is saved', async () => {
    const res = await server.admin('PATCH', '/api/settings', {
      body: {
        meta: { appName: '' },
        smtp: { enabled: true, host: '', authMethod: 'CRAM' },
        s3: { enabled: true, endpoint: 'not a url' },
        backups: { cron: 'every day', cronMaxKeep: 2 },
        batch: { enabled: true, maxRequests: 0 },
        rateLimits: { rules: [{ label: 'bad label!', maxRequests: 0, duration: 1, audience: '@nobody' }], excludedIPs: ['10.0.0.0/99'] },
        logs: { maxDays: 'ten' },
      },
    });
    assert.equal(res.status, 400, res.text);
    const data = res.body.data;
    assert.equal(data.meta.appName.code, 'validation_required');
    assert.equal(data.smtp.host.code, 'validation_required');
    assert.equal(data.smtp.authMethod.code, 'validation_in_invalid');
    assert.equal(data.s3.endpoint.code, 'validation_is_url');
    assert.equal(data.s3.bucket.code, 'validation_required');
    assert.equal(data.backups.cron.code, 'validation_invalid_cron');
    assert.equal(data.batch.maxRequests.code, 'validation_required');
    assert.equal(data.rateLimits.rules['0'].label.code, 'validation_match_invalid');
    assert.equal(data.rateLimits.rules['0'].maxRequests.code, 'validation_required');
    assert.equal(data.rateLimits.rules['0'].audience.code, 'validation_in_invalid');
    assert.equal(data.rateLimits.excludedIPs['0'].code, 'validation_invlaid_ip_or_subnet');
    assert.equal(data.logs.maxDays.code, 'validation_invalid_value');
    const after = await server.admin('GET', '/api/settings');
    assert.equal(after.body.meta.appName, 'Sections');
    assert.equal(after.body.smtp.enabled, false);
  });

  test('rate limit rules whose labels overlap are refused', async () => {
    const res = await server.admin('PATCH', '/api/settings', { body: { rateLimits: { rules: [{ label: '/api/', maxRequests: 1, duration: 1 }, { label: '/api/', maxRequests: 2, duration: 1 }] } } });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.rateLimits.rules['1'].label.code, 'validation_conflicting_rate_limit_rule');
  });

  test('with no CAIRN_SMTP_URL, mail goes through the SMTP server of the stored smtp section', async () => {
    const url = new URL(inbox.url);
    const on = await server.admin('PATCH', '/api/settings', { body: { smtp: { enabled: true, host: url.hostname, port: Number(url.port), password: '' } } });
    assert.equal(on.status, 200, on.text);
    await createUser(server, 'stored-smtp@example.com');
    const asked = await server.request('POST', '/api/collections/users/request-verification', { body: { email: 'stored-smtp@example.com' } });
    assert.equal(asked.status, 204, asked.text);
    const mail = await inbox.next('stored-smtp@example.com');
    assert.match(mail.subject, /Sections/);
    // Switched off, mail is written to files again: the inbox gets nothing more.
    const off = await server.admin('PATCH', '/api/settings', { body: { smtp: { enabled: false } } });
    assert.equal(off.status, 200, off.text);
    const test = await server.admin('POST', '/api/settings/test/email', { body: { email: 'to-files@example.com', template: 'verification' } });
    assert.equal(test.status, 204, test.text);
    assert.equal(inbox.messages.filter((m) => m.to.includes('to-files@example.com')).length, 0);
  });

  test('the S3 check tries the stored bucket settings of files or backups', async () => {
    // Backups point at a port nothing listens on.
    const bucket = await s3.bucket();
    const env = bucket.env;
    const settings = { enabled: true, endpoint: env.CAIRN_S3_ENDPOINT, bucket: env.CAIRN_S3_BUCKET, region: env.CAIRN_S3_REGION, accessKey: env.CAIRN_S3_ACCESS_KEY, secret: env.CAIRN_S3_SECRET, forcePathStyle: true };
    assert.equal((await server.admin('PATCH', '/api/settings', { body: { s3: settings, backups: { s3: { ...settings, endpoint: 'http://127.0.0.1:1', secret: 'other-secret' } } } })).status, 200);
    const files = await server.admin('POST', '/api/settings/test/s3', { body: { filesystem: 'storage' } });
    assert.equal(files.status, 204, files.text);
    const backups = await server.admin('POST', '/api/settings/test/s3', { body: { filesystem: 'backups' } });
    assert.equal(backups.status, 400, backups.text);
    assert.match(backups.body.message, /Failed to reach the S3 bucket/);
    assert.ok(!backups.text.includes('other-secret'));
  });
});
