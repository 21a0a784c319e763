import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Provider, startProvider } from '../helpers/oauth2.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

/**
 * Providers whose user is the id_token the token endpoint answers with, as PocketBase reads it: Apple
 * (signature against its keys, its issuer, an expiry), PocketBase's generic `oidc` slots without a
 * user-info URL (issuers and keys when set), and Microsoft's address from a claim (PocketBase ≥
 * 0.39.6's `idTokenEmailClaim`). The tokens are a real OAuth2 server's, signed with its keys.
 */
describe('OAuth2 sign-ins read from the id_token', () => {
  let server: TestServer;
  let oauth: Provider;
  let stranger: Provider;
  let graph: Server;
  let graphUrl: string;
  let claims: Record<string, unknown> = {};
  let graphUser: Record<string, unknown> = { id: 'ms-1', displayName: 'Megan Bowen', mail: 'graph@ms.example' };
  const REDIRECT = 'http://127.0.0.1/done';

  const providers = (extra: Record<string, Record<string, unknown>> = {}) =>
    ['apple', 'oidc2', 'microsoft'].map((name) => ({
      name,
      clientId: `${name}-client`,
      clientSecret: `${name}-secret`,
      authURL: `${oauth.url}/authorize`,
      tokenURL: `${oauth.url}/token`,
      userInfoURL: name === 'microsoft' ? `${graphUrl}/v1.0/me` : '',
      extra: extra[name] ?? { jwksURL: `${oauth.url}/jwks`, issuers: [oauth.url] },
    }));
  const configure = async (extra: Record<string, Record<string, unknown>> = {}) => {
    const res = await server.admin('PATCH', '/api/collections/members', { body: { oauth2: { enabled: true, providers: providers(extra) } } });
    assert.equal(res.status, 200, res.text);
  };

  before(async () => {
    oauth = await startProvider();
    stranger = await startProvider();
    oauth.server.service.on('beforeTokenSigning', (token: { payload: Record<string, unknown> }) => Object.assign(token.payload, claims));
    graph = createServer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(graphUser));
    });
    await new Promise<void>((resolve) => graph.listen(0, '127.0.0.1', resolve));
    graphUrl = `http://127.0.0.1:${(graph.address() as AddressInfo).port}`;
    server = await startServer();
    await createCollection(server, {
      name: 'members',
      type: 'auth',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'handle', type: 'text' },
      ],
      createRule: '',
      options: { systemFields: [{ id: '_pbf_auth_email_', name: 'email', type: 'email', system: true, required: false, onlyDomains: null, exceptDomains: null }] },
      oauth2: { enabled: true, mappedFields: { id: '', name: 'name', username: 'handle', avatarURL: '' }, providers: [] },
    });
    await configure();
  });
  after(async () => {
    await server?.close();
    await oauth?.close();
    await stranger?.close();
    await new Promise((resolve) => graph?.close(resolve));
  });

  const signIn = async (name: string) => {
    const methods = await server.request('GET', `/api/collections/members/auth-methods?redirectUrl=${encodeURIComponent(REDIRECT)}`);
    const listing = methods.body.oauth2.providers.find((p: { name: string }) => p.name === name);
    assert.ok(listing, `${name} is listed`);
    const { code } = await oauth.authorize(listing.authURL);
    const res = await server.request('POST', '/api/collections/members/auth-with-oauth2', { body: { provider: name, code, codeVerifier: listing.codeVerifier, redirectURL: REDIRECT } });
    return { res, listing };
  };

  test('Apple: the verified claims of a signed token, its form_post redirect', async () => {
    claims = { sub: '001234.apple', email: 'ann@privaterelay.example', email_verified: 'true' };
    const { res, listing } = await signIn('apple');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.record.email, 'ann@privaterelay.example');
    assert.equal(res.body.record.verified, true);
    assert.equal(res.body.meta.id, '001234.apple');
    assert.match(listing.authURL, /response_mode=form_post/);

    // The name Apple posts once with its redirect form fills the sign-up made with that code.
    claims = { sub: '005678.apple', email: 'bea@privaterelay.example', email_verified: true };
    const methods = await server.request('GET', `/api/collections/members/auth-methods?redirectUrl=${encodeURIComponent(REDIRECT)}`);
    const apple = methods.body.oauth2.providers.find((p: { name: string }) => p.name === 'apple');
    const { code } = await oauth.authorize(apple.authURL);
    const form = new URLSearchParams({ state: 'no-such-client', code, user: JSON.stringify({ name: { firstName: 'Bea', lastName: 'Apfel' }, email: 'bea@privaterelay.example' }) });
    const posted = await fetch(`${server.url}/api/oauth2-redirect`, { method: 'POST', body: form, redirect: 'manual' });
    assert.equal(posted.status, 303);
    const named = await server.request('POST', '/api/collections/members/auth-with-oauth2', { body: { provider: 'apple', code, codeVerifier: apple.codeVerifier, redirectURL: REDIRECT } });
    assert.equal(named.status, 200, named.text);
    assert.equal(named.body.record.name, 'Bea Apfel');

    // Apple's own issuer is expected unless the settings name another; the mock's is not Apple's.
    await configure({ apple: { jwksURL: `${oauth.url}/jwks` } });
    const wrongIssuer = await signIn('apple');
    assert.equal(wrongIssuer.res.status, 400);
    assert.match(wrongIssuer.res.body.message, /id_token is not valid/);

    // Keys of another server: the signature does not hold.
    await configure({ apple: { jwksURL: `${stranger.url}/jwks`, issuers: [oauth.url] } });
    const forged = await signIn('apple');
    assert.equal(forged.res.status, 400);
    assert.match(forged.res.body.message, /id_token is not valid/);
    await configure();
  });

  test("OIDC without a user-info URL: the token's claims, its issuer checked", async () => {
    claims = { sub: 'oidc-7', name: 'Olga', preferred_username: 'olga', email: 'olga@idp.example', email_verified: false };
    const { res } = await signIn('oidc2');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.record.name, 'Olga');
    assert.equal(res.body.record.handle, 'olga');
    assert.equal(res.body.record.email, '', 'an address the provider does not vouch for is not taken');

    await configure({ oidc2: { issuers: ['https://idp.elsewhere.example'] } });
    const other = await signIn('oidc2');
    assert.equal(other.res.status, 400);
    assert.match(other.res.body.message, /iss must be one of https:\/\/idp\.elsewhere\.example/);
    await configure();
  });

  test("Microsoft: Graph's mail by default, or the id_token's claim the settings name", async () => {
    claims = { email: 'claim@ms.example', xms_edov: true };
    const graphMail = await signIn('microsoft');
    assert.equal(graphMail.res.status, 200, graphMail.res.text);
    assert.equal(graphMail.res.body.record.email, 'graph@ms.example');
    assert.equal(graphMail.res.body.record.verified, false, "Graph's mail is not vouched for");
    assert.doesNotMatch(graphMail.listing.authURL, /openid/);
    // Another tenant's user whose administrator typed the same mail does not get that account.
    graphUser = { id: 'ms-2', displayName: 'Mallory', mail: 'graph@ms.example' };
    const takeover = await signIn('microsoft');
    assert.equal(takeover.res.status, 400);
    assert.match(takeover.res.body.message, /has not verified the address/);
    graphUser = { id: 'ms-1', displayName: 'Megan Bowen', mail: 'graph@ms.example' };

    await server.admin('DELETE', `/api/collections/members/records/${graphMail.res.body.record.id}`);
    await configure({ microsoft: { idTokenEmailClaim: 'email_and_xms_edov' } });
    const fromClaim = await signIn('microsoft');
    assert.equal(fromClaim.res.status, 200, fromClaim.res.text);
    assert.equal(fromClaim.res.body.record.email, 'claim@ms.example');
    assert.equal(fromClaim.res.body.record.verified, true);
    assert.match(fromClaim.listing.authURL, /scope=User\.Read\+openid/);

    // Without the domain owner's word the claim is not taken.
    await server.admin('DELETE', `/api/collections/members/records/${fromClaim.res.body.record.id}`);
    claims = { email: 'claim@ms.example', xms_edov: false };
    const unverified = await signIn('microsoft');
    assert.equal(unverified.res.status, 200, unverified.res.text);
    assert.equal(unverified.res.body.record.email, '');
    await configure();
  });
});
