import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Provider, startProvider, useProvider } from '../helpers/oauth2.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';

const REDIRECT = 'http://localhost/callback';

/**
 * Security invariant "no account takeover through an unverified email" (API contract §20, issue 36
 * holes 2 and 3): an attacker signs in with an OAuth2 identity claiming the victim's address
 * (unverified), which creates the account; once the victim takes it (OAuth2 with a verified email, or
 * OTP), the attacker's link and tokens must not get them back in. Driven against the real OAuth2 test
 * server, through the same routes the SDK calls.
 */
describe('OAuth2 pre-hijacking', () => {
  let provider: Provider;
  let server: TestServer;
  let inbox: Inbox;

  before(async () => {
    provider = await startProvider();
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
    await useProvider(server, provider);
    assert.equal((await server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true, length: 6 } } })).status, 200);
  });
  after(async () => {
    await server.close();
    await provider.close();
    await inbox.close();
  });

  async function oauth2(user: Record<string, unknown>) {
    provider.user = user;
    const methods = await server.request('GET', `/api/auth/methods?redirectUrl=${encodeURIComponent(REDIRECT)}`);
    const listing = methods.body.oauth2.providers[0];
    const { code } = await provider.authorize(listing.authUrl);
    return server.request('GET', `/api/auth/oauth2-login?${new URLSearchParams({ provider: 'mock', code, codeVerifier: listing.codeVerifier, redirectUrl: REDIRECT })}`);
  }

  async function otpSignIn(email: string) {
    const requested = await server.request('POST', '/api/collections/users/request-otp', { body: { email } });
    assert.equal(requested.status, 200, requested.text);
    const mail = await inbox.next(email, /sign-in code/);
    const code = /\b(\d{6})\b/.exec(mail.text)![1];
    return server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId: requested.body.otpId, password: code } });
  }

  test("the victim's verified OAuth2 sign-in removes the attacker's OAuth2 link and tokens", async () => {
    const victim = 'victim-oauth2@example.com';
    const attacker = { sub: 'attacker-1', email: victim, email_verified: false, name: 'Attacker' };
    const planted = await oauth2(attacker);
    assert.equal(planted.status, 200, planted.text);
    assert.equal(planted.body.user.verified, false);

    const owner = await oauth2({ sub: 'victim-1', email: victim, email_verified: true, name: 'Victim' });
    assert.equal(owner.status, 200, owner.text);
    assert.equal(owner.body.user.id, planted.body.user.id);
    assert.equal(owner.body.user.verified, true);

    assert.equal((await server.request('GET', '/api/auth/me', { token: planted.body.token })).status, 401);
    const again = await oauth2(attacker);
    assert.notEqual(again.status, 200, `the attacker's link still signs in: ${again.text}`);
    // The owner's own link works.
    const back = await oauth2({ sub: 'victim-1', email: victim, email_verified: true });
    assert.equal(back.status, 200, back.text);
    assert.equal(back.body.user.id, planted.body.user.id);
  });

  test("the victim's OTP sign-in removes the attacker's OAuth2 link and tokens", async () => {
    const victim = 'victim-otp@example.com';
    const attacker = { sub: 'attacker-2', email: victim, email_verified: false, name: 'Attacker' };
    const planted = await oauth2(attacker);
    assert.equal(planted.status, 200, planted.text);

    const owner = await otpSignIn(victim);
    assert.equal(owner.status, 200, owner.text);
    assert.equal(owner.body.record.id, planted.body.user.id);

    assert.equal((await server.request('GET', '/api/auth/me', { token: planted.body.token })).status, 401);
    const again = await oauth2(attacker);
    assert.notEqual(again.status, 200, `the attacker's link still signs in: ${again.text}`);
    assert.equal((await server.request('GET', '/api/auth/me', { token: owner.body.token })).status, 200);
  });
});
