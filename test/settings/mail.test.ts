import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { defaultAppUrl } from '../../src/settings/meta.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';

const USER = { email: 'reader@example.com', password: 'reader-password-1' };

describe('mail settings and auth collections’ templates take effect when saved', () => {
  let server: TestServer;
  let inbox: Inbox;
  before(async () => {
    inbox = await startInbox();
    server = await startServer();
    // The SMTP server of the settings, saved on the running server (no CAIRN_SMTP_URL).
    const smtp = await server.admin('PATCH', '/api/settings', { body: { smtp: { enabled: true, host: '127.0.0.1', port: Number(new URL(inbox.url).port) } } });
    assert.equal(smtp.status, 200, smtp.text);
    const user = await server.admin('POST', '/api/collections/users/records', { body: { ...USER, passwordConfirm: USER.password } });
    assert.equal(user.status, 200, user.text);
  });
  after(async () => {
    await server.close();
    await inbox.close();
  });

  /** The mail to the user matching `subject` that `action` causes (earlier ones are skipped). */
  const mailFrom = async (subject: RegExp, action: () => Promise<unknown>, to = USER.email) => {
    const before = inbox.messages.filter((m) => m.to.includes(to) && subject.test(m.subject)).length;
    await action();
    return inbox.next(to, subject, before);
  };
  const patchUsers = async (body: Record<string, unknown>) => {
    const res = await server.admin('PATCH', '/api/collections/users', { body });
    assert.equal(res.status, 200, res.text);
  };

  test('sender name and address, app name and URL of meta are in the next mail', async () => {
    const meta = await server.admin('PATCH', '/api/settings', { body: { meta: { appName: 'Lantern', appUrl: 'https://lantern.example.com', senderName: 'Lantern Desk', senderAddress: 'desk@lantern.example.com' } } });
    assert.equal(meta.status, 200, meta.text);
    const mail = await mailFrom(/Lantern/, async () => {
      const res = await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: USER.email } });
      assert.equal(res.status, 204);
    });
    assert.equal(mail.from, 'desk@lantern.example.com');
    assert.match(mail.raw, /^From: "?Lantern Desk"? <desk@lantern\.example\.com>/m);
    assert.match(mail.text, /https:\/\/lantern\.example\.com\/_\/#\/auth\/confirm-password-reset\//);
  });

  test('resetPasswordTemplate and verificationTemplate replace the default mails', async () => {
    await patchUsers({
      resetPasswordTemplate: { subject: 'Reset for {APP_NAME}', body: '<p>Go to {APP_URL}/reset/{TOKEN} now</p>' },
      verificationTemplate: { subject: 'Verify at {APP_NAME}', body: '<p>Verify {RECORD:email} with {TOKEN}</p>' },
    });
    const reset = await mailFrom(/^Reset for Lantern$/, () => server.request('POST', '/api/collections/users/request-password-reset', { body: { email: USER.email } }));
    assert.match(reset.text, /https:\/\/lantern\.example\.com\/reset\/[\w.-]{20,} now/);
    const verify = await mailFrom(/^Verify at Lantern$/, () => server.request('POST', '/api/collections/users/request-verification', { body: { email: USER.email } }));
    assert.match(verify.text, /Verify reader@example\.com with [\w.-]{20,}/);
  });

  test('confirmEmailChangeTemplate goes to the new address', async () => {
    await patchUsers({ confirmEmailChangeTemplate: { subject: 'Confirm {APP_NAME} change', body: '<p>Token {TOKEN}</p>' } });
    const login = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: USER.email, password: USER.password } });
    assert.equal(login.status, 200, login.text);
    const mail = await mailFrom(
      /^Confirm Lantern change$/,
      async () => {
        const res = await server.request('POST', '/api/collections/users/request-email-change', { token: login.body.token, body: { newEmail: 'reader-new@example.com' } });
        assert.equal(res.status, 204, res.text);
      },
      'reader-new@example.com',
    );
    assert.match(mail.text, /Token [\w.-]{20,}/);
  });

  test('otp.emailTemplate carries the code', async () => {
    await patchUsers({ otp: { enabled: true, duration: 180, length: 6, emailTemplate: { subject: '{APP_NAME} code', body: '<p>Code {OTP} for {OTP_ID}</p>' } } });
    let otpId = '';
    const mail = await mailFrom(/^Lantern code$/, async () => {
      const res = await server.request('POST', '/api/collections/users/request-otp', { body: { email: USER.email } });
      assert.equal(res.status, 200, res.text);
      otpId = res.body.otpId;
    });
    assert.match(mail.text, new RegExp(`Code \\d{6} for ${otpId}`));
  });

  test('authAlert: a sign-in from a new device mails the account, in its template; a known device does not', async () => {
    const signIn = (agent: string) =>
      server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: USER.email, password: USER.password }, headers: { 'user-agent': agent } });
    // Alerts off: the device is noted all the same.
    assert.equal((await signIn('device-one')).status, 200);
    await patchUsers({ authAlert: { enabled: true, emailTemplate: { subject: 'New sign-in to {APP_NAME}', body: '<p>From {ALERT_INFO}</p>' } } });
    assert.equal((await signIn('device-one')).status, 200);
    const alert = await mailFrom(/^New sign-in to Lantern$/, async () => assert.equal((await signIn('device-two')).status, 200));
    assert.match(alert.text, /From \d{4}-\d\d-\d\d .*device-two/);
    const origins = await server.admin('GET', '/api/collections/_authOrigins/records');
    assert.ok(origins.body.totalItems >= 2, origins.text);
    const before = inbox.messages.filter((m) => /New sign-in/.test(m.subject)).length;
    assert.equal((await signIn('device-two')).status, 200);
    await patchUsers({ authAlert: { enabled: false } });
    assert.equal((await signIn('device-three')).status, 200);
    // A marker mail sent after both sign-ins: once it is in, no alert can still be on its way.
    await mailFrom(/^Reset for Lantern$/, () => server.request('POST', '/api/collections/users/request-password-reset', { body: { email: USER.email } }));
    assert.equal(inbox.messages.filter((m) => /New sign-in/.test(m.subject)).length, before);
  });
});

describe('the app URL of mail links until one is saved', () => {
  test('is the listening address as a browser reaches it: wildcards are localhost, IPv6 bracketed', () => {
    assert.equal(defaultAppUrl('::', 8090), 'http://localhost:8090');
    assert.equal(defaultAppUrl('0.0.0.0', 8090), 'http://localhost:8090');
    assert.equal(defaultAppUrl('127.0.0.1', 8091), 'http://127.0.0.1:8091');
    assert.equal(defaultAppUrl('::1', 8090), 'http://[::1]:8090');
    assert.equal(defaultAppUrl('cairn.internal', 80), 'http://cairn.internal:80');
  });
});
