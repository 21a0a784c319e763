import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';

describe('POST /api/settings/test/email (PocketBase v0.22) and the smtp settings section', () => {
  let inbox: Inbox;
  let server: TestServer;
  before(async () => {
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
  });
  after(async () => {
    await server.close();
    await inbox.close();
  });

  test('sends the chosen template to the address, through the configured SMTP server', async () => {
    const res = await server.admin('POST', '/api/settings/test/email', { body: { email: 'ops@example.com', template: 'password-reset' } });
    assert.equal(res.status, 204, res.text);
    const mail = await inbox.next('ops@example.com');
    assert.match(mail.subject, /^\[Test\] Reset your Cairn password/);
  });

  test('a bad address or template is a 400 naming the field', async () => {
    const bad = await server.admin('POST', '/api/settings/test/email', { body: { email: 'nope', template: 'welcome' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.data.email.code, 'validation_is_email');
    assert.equal(bad.body.data.template.code, 'validation_in_invalid');
    const empty = await server.admin('POST', '/api/settings/test/email', { body: {} });
    assert.equal(empty.body.data.email.code, 'validation_required');
    assert.equal(empty.body.data.template.code, 'validation_required');
  });

  test('every template PocketBase offers can be tried: email change, one-time code, sign-in alert', async () => {
    for (const [template, subject] of [
      ['email-change', /^\[Test\] Confirm your Cairn new email address/],
      ['otp', /^\[Test\] Your Cairn sign-in code/],
      ['login-alert', /^\[Test\] Sign-in to Cairn from a new location/],
    ] as const) {
      const res = await server.admin('POST', '/api/settings/test/email', { body: { email: `${template}@example.com`, template } });
      assert.equal(res.status, 204, res.text);
      assert.match((await inbox.next(`${template}@example.com`)).subject, subject);
    }
  });

  test('with a collection (PocketBase ≥ 0.23), its own template filled with sample values; an unknown or non-auth collection is a 400', async () => {
    await createCollection(server, {
      name: 'crew',
      type: 'auth',
      fields: [{ name: 'nickname', type: 'text' }],
      options: {
        resetPasswordTemplate: { subject: 'Crew reset for {RECORD:nickname}', body: '<p>Reset at {APP_URL}/reset/{TOKEN} for {RECORD:email}</p>' },
        otp: { enabled: true, emailTemplate: { subject: 'Crew code {OTP}', body: '<p>{OTP} ({OTP_ID})</p>' } },
      },
    });
    const reset = await server.admin('POST', '/api/settings/test/email', { body: { email: 'crew@example.com', template: 'password-reset', collection: 'crew' } });
    assert.equal(reset.status, 204, reset.text);
    const mail = await inbox.next('crew@example.com');
    assert.equal(mail.subject, '[Test] Crew reset for __pb_test_nickname__');
    assert.match(mail.text, /Reset at .*\/reset\/test-token-confirms-nothing for crew@example\.com/);
    const code = await server.admin('POST', '/api/settings/test/email', { body: { email: 'crew-otp@example.com', template: 'otp', collection: 'crew' } });
    assert.equal(code.status, 204, code.text);
    assert.equal((await inbox.next('crew-otp@example.com')).subject, '[Test] Crew code 123456');
    // A template the collection does not have its own of: Cairn's.
    assert.equal((await server.admin('POST', '/api/settings/test/email', { body: { email: 'crew-v@example.com', template: 'verification', collection: 'crew' } })).status, 204);
    assert.match((await inbox.next('crew-v@example.com')).subject, /^\[Test\] Verify your Cairn email/);
    await createCollection(server, { name: 'plainposts', fields: [{ name: 'title', type: 'text' }] });
    for (const collection of ['nowhere', 'plainposts', 42]) {
      const bad = await server.admin('POST', '/api/settings/test/email', { body: { email: 'x@example.com', template: 'otp', collection } });
      assert.equal(bad.status, 400, `${collection}: ${bad.text}`);
      assert.equal(bad.body.data.collection.code, 'validation_invalid_auth_collection');
    }
  });

  test('only administrators may send it', async () => {
    assert.equal((await server.request('POST', '/api/settings/test/email', { body: { email: 'ops@example.com' } })).status, 401);
  });

  test('settings show how mail leaves without credentials; a stored smtp section does not override CAIRN_SMTP_URL', async () => {
    const settings = await server.admin('GET', '/api/settings');
    const url = new URL(inbox.url);
    assert.equal(settings.body.smtp.enabled, true);
    assert.equal(settings.body.smtp.host, url.hostname);
    assert.equal(settings.body.smtp.port, Number(url.port));
    assert.equal(settings.body.smtp.password, undefined);
    const patch = await server.admin('PATCH', '/api/settings', { body: { smtp: { host: 'mail.invalid', port: 2525, password: 'stored-pass' } } });
    assert.equal(patch.status, 200, patch.text);
    assert.equal(patch.body.smtp.host, 'mail.invalid');
    assert.ok(!patch.text.includes('stored-pass'));
    // The environment wins: the mail still reaches the server CAIRN_SMTP_URL names.
    const res = await server.admin('POST', '/api/settings/test/email', { body: { email: 'still-env@example.com', template: 'verification' } });
    assert.equal(res.status, 204, res.text);
    await inbox.next('still-env@example.com');
  });

  test('mail links open the dashboard page of the flow, naming the database and collection unless they are main and users', async () => {
    await server.admin('POST', '/api/collections/users/records', { body: { email: 'lin@example.com', password: 'lin-password-1', passwordConfirm: 'lin-password-1' } });
    await server.request('POST', '/api/collections/users/request-verification', { body: { email: 'lin@example.com' } });
    const mail = await inbox.next('lin@example.com');
    // PocketBase's link as it is, nothing after the token.
    assert.match(mail.text, /\/_\/#\/auth\/confirm-verification\/[\w-]+\r?\n/);
    await createCollection(server, { name: 'members', type: 'auth', fields: [] });
    await server.admin('POST', '/api/collections/members/records', { body: { email: 'mem@example.com', password: 'mem-password-1', passwordConfirm: 'mem-password-1' } });
    await server.request('POST', '/api/collections/members/request-verification', { body: { email: 'mem@example.com' } });
    const other = await inbox.next('mem@example.com');
    assert.match(other.text, /\/_\/#\/auth\/confirm-verification\/[\w-]+\?collection=members\r?\n/);
    await server.request('POST', '/api/admins/request-password-reset', { body: { email: 'admin@example.com' } });
    const adminMail = await inbox.next('admin@example.com');
    assert.match(adminMail.text, /\/_\/#\/confirm-password-reset\/[\w-]+\s/);
  });
});

describe('a test mail that cannot be sent', () => {
  let server: TestServer;
  let port: number;
  before(async () => {
    // A port nothing listens on: take one, then free it.
    const probe = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => probe.once('listening', r));
    port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    server = await startServer({ env: { CAIRN_SMTP_URL: `smtp://user:s3cret-pass@127.0.0.1:${port}` } });
  });
  after(() => server.close());

  test('is a 400 saying so, never showing the SMTP credentials', async () => {
    const res = await server.admin('POST', '/api/settings/test/email', { body: { email: 'ops@example.com' } });
    assert.equal(res.status, 400);
    assert.match(res.body.message, /Failed to send the test email/);
    assert.ok(!res.text.includes('s3cret-pass'));
    assert.ok(!JSON.stringify((await server.admin('GET', '/api/settings')).body).includes('s3cret-pass'));
  });
});
