import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox, tokenFrom } from '../helpers/smtp.ts';

describe('email change (request-email-change / confirm-email-change) through a real SMTP server', () => {
  let inbox: Inbox;
  let server: TestServer;
  let dora: { token: string; id: string };
  let eve: { token: string; id: string };

  before(async () => {
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
    await server.admin('PATCH', '/api/settings', { body: { meta: { appName: 'Acme', appUrl: 'https://app.example.com' } } });
    dora = await createUser(server, 'dora@example.com', 'dora-password-1');
    eve = await createUser(server, 'eve@example.com', 'eve-password-1');
    await createCollection(server, { name: 'members', type: 'auth', fields: [] });
    await createCollection(server, { name: 'notes', fields: [{ name: 'title', type: 'text' }] });
  });
  after(async () => {
    await server.close();
    await inbox.close();
  });

  const request = (collection: string, body: unknown, token: string | null) =>
    server.request('POST', `/api/collections/${collection}/request-email-change`, { body, token });
  const confirm = (collection: string, body: unknown) => server.request('POST', `/api/collections/${collection}/confirm-email-change`, { body });

  test('only the signed-in account of that collection may ask: guest 401, others 403', async () => {
    assert.equal((await request('users', { newEmail: 'new@example.com' }, null)).status, 401);
    assert.equal((await request('members', { newEmail: 'new@example.com' }, dora.token)).status, 403);
    assert.equal((await request('notes', { newEmail: 'new@example.com' }, dora.token)).status, 403);
    assert.equal((await request('users', { newEmail: 'new@example.com' }, server.adminToken)).status, 403);
  });

  test('the new address is checked: required, an email, not the current one, not another account’s', async () => {
    const cases: Array<[unknown, string]> = [
      [{}, 'validation_required'],
      [{ newEmail: 'not an email' }, 'validation_is_email'],
      [{ newEmail: 'dora@example.com' }, 'validation_not_in_invalid'],
      [{ newEmail: 'EVE@example.com' }, 'validation_invalid_new_email'],
    ];
    for (const [body, code] of cases) {
      const res = await request('users', body, dora.token);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(res.body.data.newEmail.code, code, JSON.stringify(body));
    }
  });

  test('request → mail to the new address → confirm with the password: the address changes and is verified', async () => {
    const asked = await request('users', { newEmail: 'dora.new@example.com' }, dora.token);
    assert.equal(asked.status, 204);
    assert.equal(asked.text, '');
    const mail = await inbox.next('dora.new@example.com', /new email/);
    const token = tokenFrom(mail);
    assert.ok(mail.text.includes(`https://app.example.com/_/#/auth/confirm-email-change/${token}`), 'the mail links to the confirm page');

    const missing = await confirm('users', {});
    assert.equal(missing.status, 400);
    assert.equal(missing.body.data.token.code, 'validation_required');
    assert.equal(missing.body.data.password.code, 'validation_required');

    const elsewhere = await confirm('members', { token, password: 'dora-password-1' });
    assert.equal(elsewhere.body.data.token.code, 'validation_token_collection_mismatch');

    const wrong = await confirm('users', { token, password: 'not-the-password' });
    assert.equal(wrong.status, 400);
    assert.equal(wrong.body.data.password.code, 'validation_invalid_password');

    // The wrong password did not burn the link.
    const done = await confirm('users', { token, password: 'dora-password-1' });
    assert.equal(done.status, 204, done.text);
    const signIn = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'dora.new@example.com', password: 'dora-password-1' } });
    assert.equal(signIn.status, 200);
    assert.equal(signIn.body.record.email, 'dora.new@example.com');
    assert.equal(signIn.body.record.verified, true);

    const again = await confirm('users', { token, password: 'dora-password-1' });
    assert.equal(again.status, 400);
    assert.equal(again.body.data.token.code, 'validation_invalid_token');
  });

  test('a link whose new address was taken meanwhile changes nothing', async () => {
    assert.equal((await request('users', { newEmail: 'taken.later@example.com' }, eve.token)).status, 204);
    const token = tokenFrom(await inbox.next('taken.later@example.com'));
    await createUser(server, 'taken.later@example.com');
    const res = await confirm('users', { token, password: 'eve-password-1' });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.token.code, 'validation_invalid_token_email');
  });

  test('confirming on a collection that is not an auth collection is a 404', async () => {
    assert.equal((await confirm('notes', { token: 'x', password: 'y' })).status, 404);
    assert.equal((await confirm('nowhere', { token: 'x', password: 'y' })).status, 404);
  });

  test('an email change and a password reset of one account confirmed at once: one succeeds, the other link is void', async () => {
    const reset = (body: unknown) => server.request('POST', '/api/collections/users/confirm-password-reset', { body });
    for (let round = 0; round < 3; round++) {
      const old = `racer${round}@example.com`;
      const moved = `racer${round}.moved@example.com`;
      const account = await createUser(server, old, 'racer-password-1');
      assert.equal((await request('users', { newEmail: moved }, account.token)).status, 204);
      const changeToken = tokenFrom(await inbox.next(moved, /new email/));
      assert.equal((await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: old } })).status, 204);
      const resetToken = tokenFrom(await inbox.next(old, /Reset/));
      const [changed, wasReset] = await Promise.all([
        confirm('users', { token: changeToken, password: 'racer-password-1' }),
        reset({ token: resetToken, password: 'racer-password-2', passwordConfirm: 'racer-password-2' }),
      ]);
      assert.deepEqual([changed.status, wasReset.status].sort(), [204, 400], `${changed.text} ${wasReset.text}`);
      // What the winner left: the moved address with the old password, or the old address with the new one.
      const signIn = (email: string, password: string) => server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: email, password } });
      const expected = changed.status === 204 ? [moved, 'racer-password-1'] : [old, 'racer-password-2'];
      assert.equal((await signIn(expected[0], expected[1])).status, 200);
      assert.notEqual((await signIn(moved, 'racer-password-2')).status, 200);
    }
  });
});
