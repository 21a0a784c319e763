import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Provider, startProvider, useProvider } from '../helpers/oauth2.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const REDIRECT = 'http://localhost/callback';
const VICTIM = 'victim@example.com';

/**
 * A pre-registered account: someone registers with another person's address and a password of
 * their own, then waits for the owner to sign in with OAuth2. Linking must not leave them a way in.
 */
describe('OAuth2 linking of an unverified account', () => {
  let provider: Provider;
  let server: TestServer;
  before(async () => {
    provider = await startProvider();
    server = await startServer();
    await useProvider(server, provider);
  });
  after(async () => {
    await server.close();
    await provider.close();
  });

  test("the owner's OAuth2 sign-in replaces the squatter's password and revokes their tokens", async () => {
    const squatter = { email: VICTIM, password: 'squatter-password-1' };
    assert.equal((await server.request('POST', '/api/auth/register', { body: { ...squatter, passwordConfirm: squatter.password } })).status, 200);
    const early = await server.request('POST', '/api/auth/login', { body: squatter });
    assert.equal(early.status, 200);
    assert.equal(early.body.user.verified, false);

    provider.user = { sub: 'victim-id', email: VICTIM, email_verified: true, name: 'Victim' };
    const methods = await server.request('GET', `/api/auth/methods?redirectUrl=${encodeURIComponent(REDIRECT)}`);
    const listing = methods.body.oauth2.providers[0];
    const { code } = await provider.authorize(listing.authUrl);
    const owner = await server.request('GET', `/api/auth/oauth2-login?${new URLSearchParams({ provider: 'mock', code, codeVerifier: listing.codeVerifier, redirectUrl: REDIRECT })}`);
    assert.equal(owner.status, 200, owner.text);
    assert.equal(owner.body.user.id, early.body.user.id);
    assert.equal(owner.body.user.verified, true);

    assert.equal((await server.request('POST', '/api/auth/login', { body: squatter })).status, 401);
    assert.equal((await server.request('GET', '/api/auth/me', { token: early.body.token })).status, 401);
    assert.equal((await server.request('GET', '/api/auth/me', { token: owner.body.token })).status, 200);
  });
});
