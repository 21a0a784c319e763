import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { decodeQuotedPrintable, type Inbox, startInbox, tokenFrom } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';

describe('email verification and password reset through a real SMTP server', () => {
  let inbox: Inbox;
  let server: TestServer;
  let carol: { token: string; id: string };

  before(async () => {
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
    await server.admin('PATCH', '/api/settings', {
      body: { meta: { appName: 'Acme', appUrl: 'https://app.example.com/', senderName: 'Acme Support', senderAddress: 'support@example.com' } },
    });
    carol = await createUser(server, 'carol@example.com', 'carol-password-1');
  });
  after(async () => {
    await server.close();
    await inbox.close();
  });

  const post = (path: string, body: unknown, db?: string) => server.request('POST', path, { body, db });

  test('verification: request → mail → confirm → verified; the token works once', async () => {
    const req = await post('/api/collections/users/request-verification', { email: 'carol@example.com' });
    assert.equal(req.status, 204);
    assert.equal(req.text, '');

    const mail = await inbox.next('carol@example.com', /Verify/);
    assert.equal(mail.from, 'support@example.com');
    assert.match(mail.subject, /Verify your Acme email/);
    const token = tokenFrom(mail);
    assert.ok(mail.text.includes(`https://app.example.com/_/#/auth/confirm-verification/${token}`), 'the mail links to the app');

    const confirm = await post('/api/collections/users/confirm-verification', { token });
    assert.equal(confirm.status, 204, confirm.text);
    const me = await server.request('GET', '/api/auth/me', { token: carol.token });
    assert.equal(me.body.verified, true);

    const again = await post('/api/collections/users/confirm-verification', { token });
    assert.equal(again.status, 400);
    assert.equal(again.body.data.token.code, 'validation_invalid_token');
  });

  test('requests answer 204 for unknown and already verified addresses, and send nothing', async () => {
    const before = inbox.messages.length;
    for (const email of ['nobody@example.com', 'carol@example.com']) {
      const res = await post('/api/collections/users/request-verification', { email });
      assert.equal(res.status, 204);
    }
    const reset = await post('/api/collections/users/request-password-reset', { email: 'nobody@example.com' });
    assert.equal(reset.status, 204);
    // A mail that is sent after these requests arrives; none of theirs ever does.
    await createUser(server, 'marker@example.com');
    await post('/api/collections/users/request-verification', { email: 'marker@example.com' });
    await inbox.next('marker@example.com');
    assert.equal(inbox.messages.length, before + 1);
  });

  test('requests refuse a missing or malformed address with a 400', async () => {
    for (const body of [{}, { email: '' }, { email: 'not-an-email' }, { email: ['a@b.co'] }]) {
      for (const action of ['request-verification', 'request-password-reset']) {
        const res = await post(`/api/collections/users/${action}`, body);
        assert.equal(res.status, 400, `${action} ${JSON.stringify(body)}`);
        assert.ok(res.body.data.email);
      }
    }
    assert.equal((await post('/api/collections/nope/request-password-reset', { email: 'a@b.co' })).status, 404);
  });

  test('password reset: the new password works, the old one and every earlier token do not', async () => {
    const secondSession = await post('/api/auth/login', { email: 'carol@example.com', password: 'carol-password-1' });
    assert.equal((await post('/api/collections/users/request-password-reset', { email: 'CAROL@example.com' })).status, 204);
    const mail = await inbox.next('carol@example.com', /Reset/);
    assert.match(mail.subject, /Reset your Acme password/);
    const token = tokenFrom(mail);

    // A validation error does not use the token up.
    const mismatch = await post('/api/collections/users/confirm-password-reset', { token, password: 'carol-new-pass-2', passwordConfirm: 'typo' });
    assert.equal(mismatch.status, 400);
    assert.ok(mismatch.body.data.passwordConfirm);
    const short = await post('/api/collections/users/confirm-password-reset', { token, password: 'short', passwordConfirm: 'short' });
    assert.equal(short.status, 400);
    assert.ok(short.body.data.password);

    const confirm = await post('/api/collections/users/confirm-password-reset', { token, password: 'carol-new-pass-2', passwordConfirm: 'carol-new-pass-2' });
    assert.equal(confirm.status, 204, confirm.text);

    for (const old of [carol.token, secondSession.body.token]) {
      assert.equal((await server.request('GET', '/api/auth/me', { token: old })).status, 401);
    }
    const oldLogin = await post('/api/auth/login', { email: 'carol@example.com', password: 'carol-password-1' });
    assert.equal(oldLogin.status, 401);
    assert.match(oldLogin.body.message, /Invalid credentials/);
    const newLogin = await post('/api/auth/login', { email: 'carol@example.com', password: 'carol-new-pass-2' });
    assert.equal(newLogin.status, 200);
    carol = { token: newLogin.body.token, id: newLogin.body.user.id };

    const reuse = await post('/api/collections/users/confirm-password-reset', { token, password: 'carol-third-pass', passwordConfirm: 'carol-third-pass' });
    assert.equal(reuse.status, 400);
    assert.equal(reuse.body.data.token.code, 'validation_invalid_token');
  });

  test('a confirmed reset voids the other reset links of that account', async () => {
    await post('/api/collections/users/request-password-reset', { email: 'carol@example.com' });
    await post('/api/collections/users/request-password-reset', { email: 'carol@example.com' });
    const first = tokenFrom(await inbox.next('carol@example.com', /Reset/, 1));
    const second = tokenFrom(await inbox.next('carol@example.com', /Reset/, 2));
    assert.notEqual(first, second);
    assert.equal((await post('/api/collections/users/confirm-password-reset', { token: second, password: 'carol-fourth-pw', passwordConfirm: 'carol-fourth-pw' })).status, 204);
    const other = await post('/api/collections/users/confirm-password-reset', { token: first, password: 'carol-fifth-pw', passwordConfirm: 'carol-fifth-pw' });
    assert.equal(other.status, 400);
  });

  test('two reset links of one account confirmed at once: one succeeds, the other is void', async () => {
    await createUser(server, 'twolinks@example.com', 'twolinks-password-1');
    for (let round = 0; round < 3; round++) {
      await post('/api/collections/users/request-password-reset', { email: 'twolinks@example.com' });
      await post('/api/collections/users/request-password-reset', { email: 'twolinks@example.com' });
      const tokens = [tokenFrom(await inbox.next('twolinks@example.com', /Reset/, 2 * round)), tokenFrom(await inbox.next('twolinks@example.com', /Reset/, 2 * round + 1))];
      const passwords = [`twolinks-pass-${round}-a`, `erin-pass-${round}-b`];
      const replies = await Promise.all(tokens.map((token, i) => post('/api/collections/users/confirm-password-reset', { token, password: passwords[i], passwordConfirm: passwords[i] })));
      assert.deepEqual(replies.map((r) => r.status).sort(), [204, 400], replies.map((r) => r.text).join('\n'));
      const won = passwords[replies.findIndex((r) => r.status === 204)];
      const logins = await Promise.all(passwords.map((password) => post('/api/auth/login', { email: 'twolinks@example.com', password })));
      assert.deepEqual(logins.map((r) => r.status === 200), passwords.map((p) => p === won), 'the password of the link that succeeded is the one that works');
    }
  });

  test('expired, forged, foreign-collection and foreign-database tokens are refused', async () => {
    const dave = await createUser(server, 'dave@example.com');
    await post('/api/collections/users/request-password-reset', { email: 'dave@example.com' });
    const token = tokenFrom(await inbox.next('dave@example.com', /Reset/));

    const body = { token, password: 'dave-new-password', passwordConfirm: 'dave-new-password' };
    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'elsewhere' } })).status, 200);
    assert.equal((await post('/api/collections/users/confirm-password-reset', body, 'elsewhere')).status, 400);
    await createCollection(server, { name: 'staff', type: 'auth', fields: [] });
    assert.equal((await post('/api/collections/staff/confirm-password-reset', body)).status, 400);
    assert.equal((await post('/api/collections/users/confirm-verification', { token })).status, 400, 'a reset token does not verify');
    for (const forged of ['', 'x', token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A'), 'A'.repeat(5000)]) {
      assert.equal((await post('/api/collections/users/confirm-password-reset', { ...body, token: forged })).status, 400);
    }

    const db = await server.services.registry.get('main');
    await db.run('UPDATE _auth_tokens SET expires = ? WHERE recordId = ?', [new Date(Date.now() - 1000).toISOString(), dave.id]);
    const expired = await post('/api/collections/users/confirm-password-reset', body);
    assert.equal(expired.status, 400);
    assert.equal(expired.body.data.token.code, 'validation_invalid_token');
    assert.equal((await server.request('GET', '/api/auth/me', { token: dave.token })).status, 200, 'nothing changed');
  });

  test('a verification link mailed to an old address does not verify the new one', async () => {
    const erin = await createUser(server, 'erin@example.com');
    await post('/api/collections/users/request-verification', { email: 'erin@example.com' });
    const token = tokenFrom(await inbox.next('erin@example.com', /Verify/));
    const changed = await server.admin('PATCH', `/api/collections/users/records/${erin.id}`, { body: { email: 'erin2@example.com' } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal((await post('/api/collections/users/confirm-verification', { token })).status, 400);
  });

  test('the stored tokens are hashes', async () => {
    await post('/api/collections/users/request-password-reset', { email: 'marker@example.com' });
    const token = tokenFrom(await inbox.next('marker@example.com', /Reset/));
    const db = await server.services.registry.get('main');
    const rows = await db.all<Record<string, unknown>>('SELECT * FROM _auth_tokens');
    assert.ok(rows.length > 0);
    assert.ok(!JSON.stringify(rows).includes(token));
  });
});

describe('mail without SMTP goes to <dir>/mail as .eml files', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('a password reset through the .eml file', async () => {
    const user = await createUser(server, 'frank@example.com');
    assert.equal((await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: 'frank@example.com' } })).status, 204);
    const mailDir = path.join(server.dir, 'mail');
    const file = await waitFor(() => {
      try {
        return readdirSync(mailDir).find((f) => f.endsWith('.eml'));
      } catch {
        return undefined;
      }
    }, { what: 'an .eml file' });
    const full = path.join(mailDir, file);
    assert.equal(statSync(full).mode & 0o077, 0, 'only the owner can read mails carrying tokens');
    const text = decodeQuotedPrintable(readFileSync(full, 'utf8'));
    assert.match(text, /^To: frank@example\.com$/m);
    const token = tokenFrom({ text });
    const res = await server.request('POST', '/api/collections/users/confirm-password-reset', {
      body: { token, password: 'frank-new-password', passwordConfirm: 'frank-new-password' },
    });
    assert.equal(res.status, 204, res.text);
    assert.equal((await server.request('GET', '/api/auth/me', { token: user.token })).status, 401);
  });
});
