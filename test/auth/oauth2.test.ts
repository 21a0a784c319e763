import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../helpers/process.ts';
import { type Provider, startProvider } from '../helpers/oauth2.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';

const REDIRECT = 'http://127.0.0.1:5173/oauth-callback';

describe('OAuth2 sign-in against a real provider on loopback', () => {
  let provider: Provider;
  let server: TestServer;
  // The provider's picture host: the default users' avatar is a file field, so the picture is downloaded.
  let pictures: Server;
  let pictureUrl: string;
  const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==', 'base64');

  before(async () => {
    pictures = createServer((req, res) => {
      if (req.url === '/o.png') res.writeHead(200, { 'content-type': 'image/png' }).end(PNG);
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => pictures.listen(0, '127.0.0.1', resolve));
    pictureUrl = `http://127.0.0.1:${(pictures.address() as AddressInfo).port}/o.png`;
    provider = await startProvider();
    server = await startServer();
    const res = await server.admin('PATCH', '/api/settings', { body: { oauth2: { providers: [provider.settings()] } } });
    assert.equal(res.status, 200, res.text);
  });
  after(async () => {
    await server.close();
    await provider.close();
    await new Promise((resolve) => pictures.close(resolve));
  });

  /** Runs the browser part: methods → authorize at the provider → code. */
  async function codeFor(path = '/api/auth/methods') {
    const methods = await server.request('GET', `${path}?redirectUrl=${encodeURIComponent(REDIRECT)}`);
    assert.equal(methods.status, 200, methods.text);
    const listing = (methods.body.oauth2?.providers ?? methods.body.authProviders).find((p: { name: string }) => p.name === 'mock');
    const { code, state } = await provider.authorize(listing.authUrl);
    assert.equal(state, listing.state, 'the provider hands the state back');
    return { code, codeVerifier: listing.codeVerifier as string };
  }

  function login(params: Record<string, string>) {
    return server.request('GET', `/api/auth/oauth2-login?${new URLSearchParams(params)}`);
  }

  test('settings never return the client secret', async () => {
    const res = await server.admin('GET', '/api/settings');
    assert.equal(res.status, 200);
    const mock = res.body.oauth2.providers[0];
    assert.equal(mock.name, 'mock');
    assert.equal(mock.clientId, 'cairn-client');
    assert.equal(mock.clientSecret, undefined);
    assert.ok(!res.text.includes('cairn-client-secret'));
  });

  test('methods list the provider with an authorization URL, state and PKCE values', async () => {
    const res = await server.request('GET', `/api/auth/methods?redirectUrl=${encodeURIComponent(REDIRECT)}`);
    assert.equal(res.body.oauth2.enabled, true);
    const [p] = res.body.oauth2.providers;
    assert.deepEqual(Object.keys(p).sort(), ['authUrl', 'codeChallenge', 'codeChallengeMethod', 'codeVerifier', 'displayName', 'name', 'state']);
    assert.equal(p.displayName, 'Mock ID');
    assert.equal(p.codeChallengeMethod, 'S256');
    assert.equal(p.codeChallenge, createHash('sha256').update(p.codeVerifier).digest('base64url'));
    const url = new URL(p.authUrl);
    assert.equal(url.origin + url.pathname, `${provider.url}/authorize`);
    assert.equal(url.searchParams.get('client_id'), 'cairn-client');
    assert.equal(url.searchParams.get('response_type'), 'code');
    assert.equal(url.searchParams.get('state'), p.state);
    assert.equal(url.searchParams.get('code_challenge'), p.codeChallenge);
    assert.equal(url.searchParams.get('redirect_uri'), REDIRECT);
    assert.ok(!p.authUrl.includes('cairn-client-secret'));
    const again = await server.request('GET', '/api/auth/methods');
    assert.notEqual(again.body.oauth2.providers[0].state, p.state, 'fresh state on every call');
    assert.ok(again.body.oauth2.providers[0].authUrl.endsWith('&redirect_uri='), 'PocketBase form: the client appends its redirect URL');
  });

  test('first sign-in creates a verified user; the next one finds it again', async () => {
    provider.user = { sub: 'provider-id-1', email: 'olivia@example.com', email_verified: true, name: 'Olivia', picture: pictureUrl };
    const first = await login({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.user.email, 'olivia@example.com');
    assert.equal(first.body.user.verified, true);
    assert.equal(first.body.user.name, 'Olivia');
    assert.match(first.body.user.avatar, /^\w+\.png$/, 'the picture is stored as the avatar file');
    const stored = await fetch(`${server.url}/api/files/users/${first.body.user.id}/${first.body.user.avatar}`);
    assert.equal(stored.status, 200);
    assert.deepEqual(Buffer.from(await stored.arrayBuffer()), PNG);
    assert.deepEqual(first.body.record, first.body.user);
    assert.equal(first.body.meta.isNew, true);
    assert.equal(first.body.meta.id, 'provider-id-1');

    const me = await server.request('GET', '/api/auth/me', { token: first.body.token });
    assert.equal(me.status, 200);
    assert.equal(me.body.id, first.body.user.id);

    // Same provider account, even with another email now: the same user.
    provider.user = { sub: 'provider-id-1', email: 'olivia.new@example.com', email_verified: true };
    const second = await login({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT });
    assert.equal(second.status, 200, second.text);
    assert.equal(second.body.user.id, first.body.user.id);
    assert.equal(second.body.meta.isNew, false);
  });

  test('PocketBase’s POST auth-with-oauth2 does the same', async () => {
    provider.user = { sub: 'provider-id-2', email: 'pat@example.com', email_verified: false };
    const res = await server.request('POST', '/api/collections/users/auth-with-oauth2', {
      body: { provider: 'mock', ...(await codeFor('/api/collections/users/auth-methods')), redirectUrl: REDIRECT },
    });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.record.email, 'pat@example.com');
    assert.equal(res.body.record.verified, false, 'verified as the provider says');
  });

  test('PocketBase ≥ 0.23’s redirectURL reaches the provider, and createData fills the new user under the create rule', async () => {
    const redirects: string[] = [];
    const seen = (_response: unknown, req: { body?: Record<string, string> }) => redirects.push(req.body?.redirect_uri ?? '');
    provider.server.service.on('beforeResponse', seen);
    try {
      provider.user = { sub: 'provider-id-cd', email: 'casey@example.com', email_verified: true, name: 'From Provider' };
      const res = await server.request('POST', '/api/collections/users/auth-with-oauth2', {
        body: { provider: 'mock', ...(await codeFor('/api/collections/users/auth-methods')), redirectURL: REDIRECT, createData: { name: 'Chosen Name', emailVisibility: true } },
      });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(redirects, [REDIRECT], 'the token request names the redirect URL the code was issued for');
      assert.equal(res.body.meta.isNew, true);
      assert.equal(res.body.record.name, 'Chosen Name', 'createData wins over the profile');
      assert.equal(res.body.record.emailVisibility, true);
      assert.equal(res.body.record.email, 'casey@example.com');
      assert.equal(res.body.record.verified, true);
      // Fields a guest may not set are refused as in a create: nothing is made.
      provider.user = { sub: 'provider-id-cd2', email: 'dana@example.com', email_verified: false };
      const refused = await server.request('POST', '/api/collections/users/auth-with-oauth2', {
        body: { provider: 'mock', ...(await codeFor('/api/collections/users/auth-methods')), redirectURL: REDIRECT, createData: { verified: true } },
      });
      assert.ok(refused.status === 400 || refused.status === 403, refused.text);
      assert.equal((await server.admin('GET', `/api/collections/users/records?filter=${encodeURIComponent('email="dana@example.com"')}`)).body.totalItems, 0);
      const malformed = await server.request('POST', '/api/collections/users/auth-with-oauth2', {
        body: { provider: 'mock', ...(await codeFor('/api/collections/users/auth-methods')), redirectURL: REDIRECT, createData: 'name=x' },
      });
      assert.equal(malformed.status, 400, malformed.text);
      assert.equal(malformed.body.data.createData.code, 'validation_invalid_data');
    } finally {
      provider.server.service.off('beforeResponse', seen);
    }
  });

  test('an existing account is linked when the provider verified the email', async () => {
    const quinn = await createUser(server, 'quinn@example.com');
    provider.user = { sub: 'provider-id-3', email: 'quinn@example.com', email_verified: true };
    const res = await login({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.user.id, quinn.id);
    assert.equal(res.body.user.verified, true);
    assert.equal(res.body.meta.isNew, false);
  });

  test('an existing account is not handed over on an email the provider did not verify', async () => {
    const rita = await createUser(server, 'rita@example.com');
    provider.user = { sub: 'attacker-id', email: 'rita@example.com', email_verified: false };
    const res = await login({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT });
    assert.equal(res.status, 400);
    assert.match(res.body.message, /not verified/);
    // The real owner, signed in, can link the provider account to themselves.
    const linked = await server.request('POST', '/api/collections/users/auth-with-oauth2', {
      token: rita.token,
      body: { provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT },
    });
    assert.equal(linked.status, 200, linked.text);
    assert.equal(linked.body.record.id, rita.id);
  });

  test('provider errors are clear 400s, never 500s', async () => {
    provider.user = { sub: 'provider-id-4', email: 'sam@example.com', email_verified: true };

    const badCode = await login({ provider: 'mock', code: 'not-a-code', codeVerifier: 'x'.repeat(50), redirectUrl: REDIRECT });
    assert.equal(badCode.status, 400);
    assert.match(badCode.body.message, /refused the authorization code/);
    assert.deepEqual(badCode.body.data, {});

    const { code } = await codeFor();
    const wrongVerifier = await login({ provider: 'mock', code, codeVerifier: 'y'.repeat(50), redirectUrl: REDIRECT });
    assert.equal(wrongVerifier.status, 400);

    provider.server.service.once('beforeResponse', (res: { body: unknown; statusCode: number }) => {
      res.body = { error: 'invalid_grant', error_description: 'Code expired' };
      res.statusCode = 400;
    });
    const refused = await login({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT });
    assert.equal(refused.status, 400);
    assert.match(refused.body.message, /invalid_grant/);

    provider.server.service.once('beforeUserinfo', (res: { body: unknown; statusCode: number }) => {
      res.statusCode = 401;
    });
    const userInfoRefused = await login({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT });
    assert.equal(userInfoRefused.status, 400);
    assert.match(userInfoRefused.body.message, /user-info/);

    provider.user = { sub: 'provider-id-5' };
    const noEmail = await login({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT });
    assert.equal(noEmail.status, 400);
    assert.match(noEmail.body.message, /email/);

    provider.user = { email: 'no-id@example.com' };
    const noId = await login({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT });
    assert.equal(noId.status, 400);

    const unknown = await login({ provider: 'nope', code: 'c' });
    assert.equal(unknown.status, 400);
    assert.ok(unknown.body.data.provider);
    const missing = await login({});
    assert.equal(missing.status, 400);
    assert.ok(missing.body.data.provider && missing.body.data.code);
    const arrayParam = await server.request('GET', '/api/auth/oauth2-login?provider=mock&code=a&code=b');
    assert.equal(arrayParam.status, 400);
  });

  test('an unreachable provider is a 400 that says so', async () => {
    const port = await freePort();
    const dead = { ...provider.settings('dead'), tokenUrl: `http://127.0.0.1:${port}/token` };
    const res = await server.admin('PATCH', '/api/settings', { body: { oauth2: { providers: [provider.settings(), dead] } } });
    assert.equal(res.status, 200, res.text);
    const login = await server.request('GET', `/api/auth/oauth2-login?provider=dead&code=abc&redirectUrl=${encodeURIComponent(REDIRECT)}`);
    assert.equal(login.status, 400);
    assert.match(login.body.message, /Failed to reach the OAuth2 provider/);
  });

  test('saving providers without the secret keeps the stored one', async () => {
    const { clientSecret: _omit, ...withoutSecret } = provider.settings();
    const res = await server.admin('PATCH', '/api/settings', { body: { oauth2: { providers: [withoutSecret] } } });
    assert.equal(res.status, 200, res.text);
    provider.user = { sub: 'provider-id-6', email: 'tess@example.com', email_verified: true };
    const login = await server.request('GET', `/api/auth/oauth2-login?${new URLSearchParams({ provider: 'mock', ...(await codeFor()), redirectUrl: REDIRECT })}`);
    assert.equal(login.status, 200, login.text);
  });

  test('provider settings are validated; built-in names prefill their URLs', async () => {
    const cases: Array<[unknown, string]> = [
      [{ oauth2: { providers: [{ ...provider.settings(), clientId: '' }] } }, 'oauth2.providers.0.clientId'],
      [{ oauth2: { providers: [{ ...provider.settings('fresh'), clientSecret: undefined }] } }, 'oauth2.providers.0.clientSecret'],
      [{ oauth2: { providers: [{ ...provider.settings(), tokenUrl: 'javascript:alert(1)' }] } }, 'oauth2.providers.0.tokenUrl'],
      [{ oauth2: { providers: [{ ...provider.settings(), name: 'Bad Name!' }] } }, 'oauth2.providers.0.name'],
      [{ oauth2: { providers: [provider.settings(), provider.settings()] } }, 'oauth2.providers.1.name'],
      [{ oauth2: { providers: 'x' } }, 'oauth2.providers'],
      [{ oauth2: 5 }, 'oauth2'],
      [{ nonsense: {} }, 'nonsense'],
      [{ meta: { appUrl: 'not a url' } }, 'meta.appUrl'],
      [{ meta: { senderAddress: 'nope' } }, 'meta.senderAddress'],
    ];
    for (const [body, key] of cases) {
      const res = await server.admin('PATCH', '/api/settings', { body });
      assert.equal(res.status, 400, `${key}: ${res.text}`);
      // Answered nested per section, as PocketBase does: {oauth2: {providers: {0: {clientId: …}}}}.
      const error = key.split('.').reduce((node, k) => node?.[k], res.body.data);
      assert.equal(typeof error?.code, 'string', `${key} in ${res.text}`);
    }
    assert.equal((await server.admin('PATCH', '/api/settings', { body: [] })).status, 400);
    // Nothing of a refused request is saved.
    const still = await server.admin('GET', '/api/settings');
    assert.deepEqual(still.body.oauth2.providers.map((p: { name: string }) => p.name), ['mock']);

    const google = await server.admin('PATCH', '/api/settings', { body: { oauth2: { providers: [provider.settings(), { name: 'google', clientId: 'g-id', clientSecret: 'g-secret' }] } } });
    assert.equal(google.status, 200, google.text);
    const g = google.body.oauth2.providers.find((p: { name: string }) => p.name === 'google');
    assert.equal(g.displayName, 'Google');
    assert.equal(g.authUrl, 'https://accounts.google.com/o/oauth2/v2/auth');
    // PocketBase's scopes for Google.
    assert.deepEqual(g.scopes, ['https://www.googleapis.com/auth/userinfo.profile', 'https://www.googleapis.com/auth/userinfo.email']);
    assert.equal(g.pkce, true);
    const methods = await server.request('GET', '/api/auth/methods');
    assert.deepEqual(methods.body.oauth2.providers.map((p: { name: string }) => p.name), ['mock', 'google']);
  });
});
