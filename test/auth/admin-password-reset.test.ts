import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PocketBase from 'pocketbase';
import { ADMIN_EMAIL, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox, tokenFrom } from '../helpers/smtp.ts';

/** PocketBase v0.22's administrator password reset, end to end through a real SMTP server. */
describe('administrator password reset', () => {
  let inbox: Inbox;
  let server: TestServer;

  before(async () => {
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
    const second = { email: 'second-admin@example.com', password: 'second-admin-pw-1', passwordConfirm: 'second-admin-pw-1' };
    assert.equal((await server.admin('POST', '/api/admins', { body: second })).status, 200);
  });
  after(async () => {
    await server.close();
    await inbox.close();
  });

  const post = (path: string, body: unknown) => server.request('POST', path, { body });

  test('request → mail → confirm (through the PocketBase SDK): the new password works, old sessions and the token do not', async () => {
    const pb = new PocketBase(server.url);
    assert.equal(await pb.admins.requestPasswordReset(ADMIN_EMAIL), true);
    const token = tokenFrom(await inbox.next(ADMIN_EMAIL, /Reset/));

    // A mismatched confirmation is refused without using up the token.
    const typo = await post('/api/admins/confirm-password-reset', { token, password: 'brand-new-pw-1', passwordConfirm: 'brand-new-pw-2' });
    assert.equal(typo.status, 400);
    assert.equal(typo.body.data.passwordConfirm.code, 'validation_values_mismatch');
    const short = await post('/api/admins/confirm-password-reset', { token, password: 'short', passwordConfirm: 'short' });
    assert.equal(short.status, 400);
    assert.equal(short.body.data.password.code, 'validation_min_text_constraint');

    assert.equal(await pb.admins.confirmPasswordReset(token, 'brand-new-pw-1', 'brand-new-pw-1'), true);
    const auth = await pb.admins.authWithPassword(ADMIN_EMAIL, 'brand-new-pw-1');
    assert.equal(auth.admin.email, ADMIN_EMAIL);

    assert.equal((await server.admin('GET', '/api/admins/me')).status, 401, 'the token from before the reset is revoked');
    const again = await post('/api/admins/confirm-password-reset', { token, password: 'another-pw-123', passwordConfirm: 'another-pw-123' });
    assert.equal(again.status, 400);
    assert.equal(again.body.data.token.code, 'validation_invalid_token');
  });

  test('unknown addresses answer 204 and get no mail; bad input and foreign tokens are 400s', async () => {
    const before = inbox.messages.length;
    assert.equal((await post('/api/admins/request-password-reset', { email: 'nobody@example.com' })).status, 204);
    assert.equal((await post('/api/admins/request-password-reset', { email: 'not an email' })).status, 400);
    assert.equal((await post('/api/admins/request-password-reset', ['x'])).status, 400);

    // A user's reset token is no administrator's.
    await createUser(server, 'plain-user@example.com');
    assert.equal((await post('/api/collections/users/request-password-reset', { email: 'plain-user@example.com' })).status, 204);
    const userToken = tokenFrom(await inbox.next('plain-user@example.com', /Reset/));
    const foreign = await post('/api/admins/confirm-password-reset', { token: userToken, password: 'takeover-pw-1', passwordConfirm: 'takeover-pw-1' });
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.data.token.code, 'validation_invalid_token');

    assert.equal(inbox.messages.filter((m) => m.to.includes('nobody@example.com')).length, 0);
    assert.equal(inbox.messages.length, before + 1, 'only the user mail was sent');
  });

  test('two reset links confirmed at once: one succeeds, the other is void', async () => {
    const email = 'second-admin@example.com';
    await post('/api/admins/request-password-reset', { email });
    await post('/api/admins/request-password-reset', { email });
    const tokens = [tokenFrom(await inbox.next(email, /Reset/, 0)), tokenFrom(await inbox.next(email, /Reset/, 1))];
    const replies = await Promise.all(tokens.map((token, i) => post('/api/admins/confirm-password-reset', { token, password: `racing-pw-${i}-x`, passwordConfirm: `racing-pw-${i}-x` })));
    assert.deepEqual(replies.map((r) => r.status).sort(), [204, 400], replies.map((r) => r.text).join('\n'));
  });
});
