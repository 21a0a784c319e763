import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databaseOf } from '../helpers/inspect.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';

function codeFrom(mail: { text: string }): string {
  const m = /Code: (\d+)/.exec(mail.text);
  if (!m) throw new Error(`no code in mail:\n${mail.text}`);
  return m[1];
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

/** Moves a row's `created` back, as if it had been made `seconds` ago. */
async function age(server: TestServer, table: '_otps' | '_mfas', id: string, seconds: number): Promise<void> {
  const db = await databaseOf(server);
  await db.run(`UPDATE ${table} SET created = ? WHERE id = ?`, [new Date(Date.now() - seconds * 1000).toISOString(), id]);
}

async function verifiedOf(server: TestServer, id: string): Promise<boolean> {
  return (await server.admin('GET', `/api/collections/users/records/${id}`)).body.verified;
}

describe('OTP, MFA and impersonation (PocketBase 0.23)', () => {
  let server: TestServer;
  let inbox: Inbox;
  let mailsTo: (to: string) => number;

  before(async () => {
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
    mailsTo = (to) => inbox.messages.filter((m) => m.to.includes(to)).length;
  });
  after(async () => {
    await server.close();
    await inbox.close();
  });

  async function requestOtp(email: string): Promise<string> {
    const res = await server.request('POST', '/api/collections/users/request-otp', { body: { email } });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(Object.keys(res.body), ['otpId']);
    assert.match(res.body.otpId, /^[a-z0-9]{15}$/);
    return res.body.otpId;
  }

  test('OTP is refused while the collection has it off', async () => {
    const res = await server.request('POST', '/api/collections/users/request-otp', { body: { email: 'x@example.com' } });
    assert.equal(res.status, 403);
    assert.match(res.body.message, /OTP/);
    const methods = await server.request('GET', '/api/collections/users/auth-methods');
    assert.deepEqual(methods.body.otp, { enabled: false, duration: 0 });
  });

  test('request-otp mails a code (hashed at rest); auth-with-otp signs in once and verifies the address', async () => {
    const patched = await server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true, length: 6 } } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.otp, { enabled: true, duration: 180, length: 6 });
    assert.deepEqual(patched.body.options.otp, patched.body.otp);
    const methods = await server.request('GET', '/api/collections/users/auth-methods');
    assert.deepEqual(methods.body.otp, { enabled: true, duration: 180 });

    const user = await createUser(server, 'otp-user@example.com', 'otp-user-pass-1');
    assert.equal(await verifiedOf(server, user.id), false);
    const otpId = await requestOtp('otp-user@example.com');
    const mail = await inbox.next('otp-user@example.com', /sign-in code/);
    const code = codeFrom(mail);
    assert.match(code, /^\d{6}$/);

    const db = await databaseOf(server);
    const stored = await db.get<{ hash: string }>('SELECT hash FROM _otps WHERE id = ?', [otpId]);
    assert.ok(stored);
    assert.ok(!stored.hash.includes(code), 'only a keyed hash of the code is stored');

    const res = await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId, password: code } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.record.id, user.id);
    assert.equal(res.body.record.verified, true);
    assert.equal((await server.request('GET', '/api/auth/me', { token: res.body.token })).status, 200);
    assert.equal(await verifiedOf(server, user.id), true);
    // As PocketBase does, a first verification by OTP replaces the password: whoever registered the
    // address before its owner loses the account.
    const old = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'otp-user@example.com', password: 'otp-user-pass-1' } });
    assert.equal(old.status, 401);
    assert.equal((await server.request('GET', '/api/auth/me', { token: user.token })).status, 401);

    const reused = await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId, password: code } });
    assert.equal(reused.status, 400);
    assert.equal(reused.body.message, 'Invalid or expired OTP.');
    assert.deepEqual(reused.body.data, {});
  });

  test('an unknown address gets an otpId like any other, no mail, and nothing stored', async () => {
    const db = await databaseOf(server);
    const rowsBefore = (await db.all('SELECT id FROM _otps')).length;
    const otpId = await requestOtp('nobody-here@example.com');
    assert.equal((await db.all('SELECT id FROM _otps')).length, rowsBefore);
    // A real request made after it is delivered; the unknown address got nothing meanwhile.
    await createUser(server, 'otp-second@example.com');
    await requestOtp('otp-second@example.com');
    await inbox.next('otp-second@example.com', /sign-in code/);
    assert.equal(mailsTo('nobody-here@example.com'), 0);
    const res = await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId, password: '123456' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'Invalid or expired OTP.');
  });

  test('a wrong code, an expired otpId and more than 5 wrong tries answer alike and sign nobody in', async () => {
    await createUser(server, 'otp-guess@example.com', 'otp-guess-pass-1');
    const sent = inbox.messages.length;
    const otpId = await requestOtp('otp-guess@example.com');
    const code = codeFrom(await waitFor(() => inbox.messages.slice(sent).find((m) => m.to.includes('otp-guess@example.com')), { what: 'the OTP mail' }));
    const wrong = code === '000000' ? '111111' : '000000';
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId, password: wrong } }));
    for (const a of answers) {
      assert.equal(a.status, 400);
      assert.equal(a.body.message, 'Invalid or expired OTP.');
    }
    const late = await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId, password: code } });
    assert.equal(late.status, 400, 'the right code after 5 wrong tries is refused');
    assert.equal(late.body.message, 'Invalid or expired OTP.');

    const fresh = await requestOtp('otp-guess@example.com');
    const freshCode = codeFrom(await inbox.next('otp-guess@example.com', /sign-in code/, 1));
    await age(server, '_otps', fresh, 181);
    const expired = await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId: fresh, password: freshCode } });
    assert.equal(expired.status, 400);
    assert.equal(expired.body.message, 'Invalid or expired OTP.');
    assert.equal(await verifiedOf(server, (await server.admin('GET', '/api/collections/users/records?filter=email="otp-guess@example.com"')).body.items[0].id), false, 'nothing changed');

    const blank = await server.request('POST', '/api/collections/users/auth-with-otp', { body: {} });
    assert.equal(blank.status, 400);
    assert.ok(blank.body.data.otpId && blank.body.data.password);
    const badEmail = await server.request('POST', '/api/collections/users/request-otp', { body: { email: 'not an address' } });
    assert.equal(badEmail.status, 400);
    assert.ok(badEmail.body.data.email);
  });

  test('MFA: a first factor answers 401 with an mfaId; a different second method completes it', async () => {
    const patched = await server.admin('PATCH', '/api/collections/users', { body: { mfa: { enabled: true, duration: 600 } } });
    assert.equal(patched.status, 200, patched.text);
    assert.deepEqual(patched.body.mfa, { enabled: true, duration: 600, rule: '' });
    const user = await createUser(server, 'mfa-user@example.com', 'mfa-user-pass-1').catch(() => undefined);
    assert.equal(user, undefined, 'the helper signs in, which now needs a second factor');
    const id = (await server.admin('GET', '/api/collections/users/records?filter=email="mfa-user@example.com"')).body.items[0].id;

    const first = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'mfa-user@example.com', password: 'mfa-user-pass-1' } });
    assert.equal(first.status, 401);
    assert.equal(first.body.code, 401);
    assert.deepEqual(first.body.data, {});
    assert.equal(typeof first.body.message, 'string');
    const mfaId = first.body.mfaId;
    assert.match(mfaId, /^[a-z0-9]{15}$/);
    assert.equal(first.body.token, undefined);

    const same = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'mfa-user@example.com', password: 'mfa-user-pass-1', mfaId } });
    assert.equal(same.status, 400);
    assert.match(same.body.message, /different authentication method/);
    const wrongPassword = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'mfa-user@example.com', password: 'nope-nope-nope', mfaId } });
    assert.equal(wrongPassword.status, 401, 'credentials come first');
    assert.equal(wrongPassword.body.mfaId, undefined);

    const otpId = await requestOtp('mfa-user@example.com');
    const code = codeFrom(await inbox.next('mfa-user@example.com', /sign-in code/));
    const done = await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId, password: code, mfaId } });
    assert.equal(done.status, 200, done.text);
    assert.equal(done.body.record.id, id);
    assert.equal(claimsOf(done.body.token).id, id);
    // The first factor completes one sign-in only.
    const again = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'mfa-user@example.com', password: 'mfa-user-pass-1', mfaId } });
    assert.equal(again.status, 400);
    assert.match(again.body.message, /Invalid or expired MFA session/);
    // With MFA on, OTP verification leaves the password as it is.
    const stillWorks = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'mfa-user@example.com', password: 'mfa-user-pass-1' } });
    assert.equal(stillWorks.status, 401);
    assert.ok(stillWorks.body.mfaId);
    // A refresh is not a sign-in: no second factor.
    assert.equal((await server.request('POST', '/api/collections/users/auth-refresh', { token: done.body.token })).status, 200);
  });

  test('MFA: an expired mfaId is refused and nothing is signed in', async () => {
    const first = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'mfa-user@example.com', password: 'mfa-user-pass-1' } });
    const mfaId = first.body.mfaId;
    await age(server, '_mfas', mfaId, 601);
    const otpId = await requestOtp('mfa-user@example.com');
    const code = codeFrom(await inbox.next('mfa-user@example.com', /sign-in code/, 1));
    const res = await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId, password: code, mfaId } });
    assert.equal(res.status, 400);
    assert.match(res.body.message, /Invalid or expired MFA session/);
    assert.equal(res.body.token, undefined);
  });

  test("MFA: the rule decides whose sign-ins need a second factor; an invalid rule is refused", async () => {
    const bad = await server.admin('PATCH', '/api/collections/users', { body: { mfa: { rule: 'nope = 1' } } });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.data.mfa.rule.code);
    const ruled = await server.admin('PATCH', '/api/collections/users', { body: { mfa: { rule: 'email ~ "@strict.example.com"' } } });
    assert.equal(ruled.status, 200, ruled.text);
    assert.equal((await server.admin('GET', '/api/collections/users')).body.mfa.rule, 'email ~ "@strict.example.com"');
    await server.request('POST', '/api/auth/register', { body: { email: 'relaxed@example.com', password: 'relaxed-pass-1', passwordConfirm: 'relaxed-pass-1' } });
    await server.request('POST', '/api/auth/register', { body: { email: 'someone@strict.example.com', password: 'strict-pass-1', passwordConfirm: 'strict-pass-1' } });
    const relaxed = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'relaxed@example.com', password: 'relaxed-pass-1' } });
    assert.equal(relaxed.status, 200, relaxed.text);
    const strict = await server.request('POST', '/api/auth/login', { body: { email: 'someone@strict.example.com', password: 'strict-pass-1' } });
    assert.equal(strict.status, 401);
    assert.ok(strict.body.mfaId);
    assert.equal((await server.admin('PATCH', '/api/collections/users', { body: { mfa: { enabled: false, rule: '' } } })).status, 200);
  });

  test('impersonation: superusers only, a static token, kept in the request log with the superuser id', async () => {
    const target = await createUser(server, 'impersonated@example.com', 'impersonated-pass-1');
    const other = await createUser(server, 'bystander@example.com', 'bystander-pass-1');
    assert.equal((await server.request('POST', `/api/collections/users/impersonate/${target.id}`, { body: {} })).status, 401);
    const byUser = await server.request('POST', `/api/collections/users/impersonate/${target.id}`, { token: other.token, body: {} });
    assert.equal(byUser.status, 403);
    assert.equal(byUser.body.code, 403);
    const key = await server.admin('POST', '/api/keys', { body: { name: 'admin-key', roles: ['admin'] } });
    assert.equal((await server.request('POST', `/api/collections/users/impersonate/${target.id}`, { token: key.body.key, body: {} })).status, 403);

    const res = await server.admin('POST', `/api/collections/users/impersonate/${target.id}`, { body: { duration: 120 } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.record.id, target.id);
    assert.equal(res.body.record.email, 'impersonated@example.com');
    const claims = claimsOf(res.body.token);
    assert.equal(claims.refreshable, false);
    assert.equal(claims.id, target.id);
    assert.ok(Math.abs((claims.exp as number) - (claims.iat as number) - 120) <= 1);
    assert.equal((await server.request('GET', '/api/auth/me', { token: res.body.token })).body.id, target.id);
    const refreshed = await server.request('POST', '/api/collections/users/auth-refresh', { token: res.body.token });
    assert.equal(refreshed.status, 200);
    assert.equal(refreshed.body.token, res.body.token, 'a static token is not renewed');

    const defaultTtl = await server.admin('POST', `/api/collections/users/impersonate/${target.id}`, { body: {} });
    const c = claimsOf(defaultTtl.body.token);
    assert.ok(Math.abs((c.exp as number) - (c.iat as number) - 86400) <= 1, 'duration 0: the collection token lifetime');
    assert.equal((await server.admin('POST', '/api/collections/users/impersonate/nosuchuser00000', { body: {} })).status, 404);
    assert.equal((await server.admin('POST', `/api/collections/users/impersonate/${target.id}`, { body: { duration: 'long' } })).status, 400);

    const adminId = (await server.admin('GET', '/api/admins/me')).body.id;
    const log = await waitFor(
      async () => (await server.admin('GET', `/api/logs?filter=${encodeURIComponent(`url ~ "/impersonate/${target.id}" && status = 200`)}`)).body.items?.[0],
      { what: 'the impersonation in the request log' },
    );
    assert.equal(log.data.auth, 'admin');
    assert.equal(log.data.authId, adminId);
  });
});

describe('OTP sign-ins are rate limited as sign-ins', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { CAIRN_RATE_LIMIT: 'on' } });
    await server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true } } });
  });
  after(() => server.close());

  test('more than 10 tries of one otpId a minute get a 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 12; i++) {
      statuses.push((await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId: 'aaaaaaaaaaaaaaa', password: String(10000000 + i) } })).status);
    }
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(400));
    assert.deepEqual(statuses.slice(10), [429, 429]);
  });
});
