import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { type Provider, startProvider } from '../helpers/oauth2.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/**
 * The providers PocketBase has built in, configured by name as an app moved from PocketBase has them:
 * each is asked for its user as that vendor wants (headers, GraphQL, a second request for the
 * addresses) and read from the vendor's own shape. The authorization and the token come from a real
 * OAuth2 server; each vendor's user API is a real HTTP server answering in that vendor's shape.
 */
describe('OAuth2 providers PocketBase has built in', () => {
  let server: TestServer;
  let oauth: Provider;
  let vendor: Server;
  let vendorUrl: string;
  const answers = new Map<string, unknown>();
  const seen: Seen[] = [];
  const REDIRECT = 'http://127.0.0.1/done';
  const NAMES = ['github', 'discord', 'twitch', 'linear', 'vk', 'notion', 'trakt', 'box', 'spotify', 'gitlab', 'monday', 'bitbucket'];

  before(async () => {
    oauth = await startProvider();
    vendor = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
        const path = (req.url ?? '').split('?')[0];
        const answer = answers.get(path);
        res.writeHead(answer === undefined ? 404 : 200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer ?? { message: 'Not Found' }));
      });
    });
    await new Promise<void>((resolve) => vendor.listen(0, '127.0.0.1', resolve));
    vendorUrl = `http://127.0.0.1:${(vendor.address() as AddressInfo).port}`;
    server = await startServer();
    await createCollection(server, {
      name: 'members',
      type: 'auth',
      fields: [
        { name: 'extId', type: 'text' },
        { name: 'name', type: 'text' },
        { name: 'handle', type: 'text', unique: true },
        { name: 'picture', type: 'url' },
      ],
      createRule: '',
      listRule: '',
      viewRule: '',
      // Members may have no address: some providers share none.
      options: { systemFields: [{ id: '_pbf_auth_email_', name: 'email', type: 'email', system: true, required: false, onlyDomains: null, exceptDomains: null }] },
      oauth2: {
        enabled: true,
        mappedFields: { id: 'extId', name: 'name', username: 'handle', avatarURL: 'picture' },
        // As PocketBase keeps them: a name and the client's credentials; the URLs only where the
        // test must point them here.
        providers: NAMES.map((name) => ({
          name,
          clientId: `${name}-client`,
          clientSecret: `${name}-secret`,
          authURL: `${oauth.url}/authorize`,
          tokenURL: `${oauth.url}/token`,
          userInfoURL: `${vendorUrl}/${name}/me`,
        })),
      },
    });
  });
  after(async () => {
    await server?.close();
    await oauth?.close();
    await new Promise((resolve) => vendor?.close(resolve));
  });

  /** Signs in with `name` through the collection's auth methods, as the SDK does. */
  const signIn = async (name: string) => {
    const methods = await server.request('GET', `/api/collections/members/auth-methods?redirectUrl=${encodeURIComponent(REDIRECT)}`);
    assert.equal(methods.status, 200, methods.text);
    const listing = methods.body.oauth2.providers.find((p: { name: string }) => p.name === name);
    assert.ok(listing, `${name} is listed`);
    const { code } = await oauth.authorize(listing.authURL);
    seen.length = 0;
    const res = await server.request('POST', '/api/collections/members/auth-with-oauth2', {
      body: { provider: name, code, codeVerifier: listing.codeVerifier, redirectURL: REDIRECT },
    });
    return { res, listing, requests: [...seen] };
  };
  const record = (res: { body: { record: Record<string, unknown> } }) => {
    const { extId, name, handle, picture, email, verified } = res.body.record;
    return { extId, name, handle, picture, email, verified };
  };

  test('the built-in names are known with their display names', async () => {
    const res = await server.admin('GET', '/api/collections/meta/oauth2-providers');
    assert.equal(res.status, 200, res.text);
    const names = (res.body as Array<{ name: string }>).map((p) => p.name);
    for (const name of ['google', 'github', 'spotify', 'twitter', 'instagram2', 'vk', 'lark', 'planningcenter', 'oidc']) assert.ok(names.includes(name), name);
    const methods = await server.request('GET', '/api/collections/members/auth-methods');
    const twitch = methods.body.oauth2.providers.find((p: { name: string }) => p.name === 'twitch');
    assert.equal(twitch.displayName, 'Twitch');
    assert.match(twitch.authURL, /scope=user%3Aread%3Aemail/, "Twitch's scope");
  });

  test('GitHub: the user, and its verified primary address from a second request', async () => {
    answers.set('/github/me', { id: 583231, login: 'octocat', name: 'The Octocat', avatar_url: 'https://avatars.example/u/583231', email: 'public@example.com' });
    answers.set('/github/me/emails', [
      { email: 'old@example.com', verified: true, primary: false },
      { email: 'octocat@example.com', verified: true, primary: true },
    ]);
    const { res, requests } = await signIn('github');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(record(res), { extId: '583231', name: 'The Octocat', handle: 'octocat', picture: 'https://avatars.example/u/583231', email: 'octocat@example.com', verified: true });
    assert.deepEqual(
      requests.map((r) => `${r.method} ${r.url} ${r.headers.authorization?.split(' ')[0]}`),
      ['GET /github/me Bearer', 'GET /github/me/emails Bearer'],
    );
    // Another account with a username someone has (`handle` is unique): the sign-up goes on without it.
    answers.set('/github/me', { id: 9, login: 'octocat', name: 'Copy Cat' });
    answers.set('/github/me/emails', []);
    const copy = await signIn('github');
    assert.equal(copy.res.status, 200, copy.res.text);
    assert.deepEqual(record(copy.res), { extId: '9', name: 'Copy Cat', handle: '', picture: '', email: '', verified: false });
  });

  test('Discord: the global name, else the tag; the CDN avatar; the address only when verified', async () => {
    answers.set('/discord/me', { id: '80351110224678912', username: 'nelly', discriminator: '1337', global_name: null, avatar: '8342729096ea3675442027381ff50dfe', verified: true, email: 'nelly@example.com' });
    const { res } = await signIn('discord');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(record(res), {
      extId: '80351110224678912',
      name: 'nelly#1337',
      handle: 'nelly',
      picture: 'https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png',
      email: 'nelly@example.com',
      verified: true,
    });
    answers.set('/discord/me', { id: '42', username: 'quiet', discriminator: '0', global_name: 'Quiet One', avatar: null, verified: false, email: 'unverified@example.com' });
    const quiet = await signIn('discord');
    assert.equal(quiet.res.status, 200, quiet.res.text);
    assert.deepEqual(record(quiet.res), { extId: '42', name: 'Quiet One', handle: 'quiet', picture: '', email: '', verified: false });
  });

  test("Twitch with its Client-Id header, Notion with its version, Trakt with its API key", async () => {
    answers.set('/twitch/me', { data: [{ id: '141981764', login: 'twitchdev', display_name: 'TwitchDev', email: 'dev@twitch.example', profile_image_url: 'https://static.example/dev.png' }] });
    const twitch = await signIn('twitch');
    assert.equal(twitch.res.status, 200, twitch.res.text);
    assert.deepEqual(record(twitch.res), { extId: '141981764', name: 'TwitchDev', handle: 'twitchdev', picture: 'https://static.example/dev.png', email: 'dev@twitch.example', verified: true });
    assert.equal(twitch.requests[0].headers['client-id'], 'twitch-client');

    answers.set('/notion/me', { object: 'user', type: 'bot', bot: { owner: { type: 'user', user: { id: 'n-1', name: 'Ada', avatar_url: 'https://notion.example/ada.png', person: { email: 'ada@notion.example' } } } } });
    const notion = await signIn('notion');
    assert.equal(notion.res.status, 200, notion.res.text);
    assert.deepEqual(record(notion.res), { extId: 'n-1', name: 'Ada', handle: '', picture: 'https://notion.example/ada.png', email: 'ada@notion.example', verified: true });
    assert.equal(notion.requests[0].headers['notion-version'], '2022-06-28');

    answers.set('/trakt/me', { user: { username: 'sean', name: 'Sean Rudford', ids: { slug: 'sean', uuid: 'b6589fc6ab0dc82cf12099d1c2d40ab994e8410c' }, images: { avatar: { full: 'https://trakt.example/sean.jpg' } } } });
    const trakt = await signIn('trakt');
    assert.equal(trakt.res.status, 200, trakt.res.text);
    assert.deepEqual(record(trakt.res), { extId: 'b6589fc6ab0dc82cf12099d1c2d40ab994e8410c', name: 'Sean Rudford', handle: 'sean', picture: 'https://trakt.example/sean.jpg', email: '', verified: false });
    assert.equal(trakt.requests[0].headers['trakt-api-key'], 'trakt-client');
    assert.equal(trakt.requests[0].headers['trakt-api-version'], '2');
  });

  test('Linear and monday.com are asked with GraphQL; Linear, VK and Bitbucket without PKCE', async () => {
    answers.set('/linear/me', { data: { viewer: { id: 'lin-1', name: 'Lin Ear', displayName: 'lin', email: 'lin@linear.example', avatarUrl: 'https://linear.example/lin.png', active: true } } });
    const linear = await signIn('linear');
    assert.equal(linear.res.status, 200, linear.res.text);
    assert.deepEqual(record(linear.res), { extId: 'lin-1', name: 'Lin Ear', handle: 'lin', picture: 'https://linear.example/lin.png', email: 'lin@linear.example', verified: true });
    assert.equal(linear.requests[0].method, 'POST');
    assert.match(JSON.parse(linear.requests[0].body).query, /viewer \{ id displayName name email avatarUrl active \}/);
    assert.equal(linear.listing.codeVerifier, '');
    assert.doesNotMatch(linear.listing.authURL, /code_challenge/);

    answers.set('/monday/me', { data: { me: { id: 9, enabled: true, name: 'Mo Day', email: 'mo@monday.example', is_verified: false, photo_small: 'https://monday.example/mo.png' } } });
    const monday = await signIn('monday');
    assert.equal(monday.res.status, 200, monday.res.text);
    assert.deepEqual(record(monday.res), { extId: '9', name: 'Mo Day', handle: '', picture: 'https://monday.example/mo.png', email: '', verified: false });
    assert.equal(monday.requests[0].method, 'POST');
    assert.match(monday.listing.authURL, /code_challenge=/, 'monday.com takes PKCE');
  });

  test("VK's address comes with the token", async () => {
    answers.set('/vk/me', { response: [{ id: 1, first_name: 'Pavel', last_name: 'Durov', screen_name: 'durov', photo_max: 'https://vk.example/durov.jpg' }] });
    oauth.server.service.once('beforeResponse', (res: { body: Record<string, unknown> }) => {
      res.body.email = 'durov@vk.example';
    });
    const vk = await signIn('vk');
    assert.equal(vk.res.status, 200, vk.res.text);
    assert.deepEqual(record(vk.res), { extId: '1', name: 'Pavel Durov', handle: 'durov', picture: 'https://vk.example/durov.jpg', email: 'durov@vk.example', verified: true });
    assert.equal(vk.listing.codeVerifier, '');
  });

  test('a provider that shares no address makes an account where the collection allows none', async () => {
    answers.set('/spotify/me', { id: 'wizzler', display_name: 'JM Wizzler', email: 'not-verified@example.com', images: [{ url: 'https://i.scdn.example/wiz.jpg', height: 300 }] });
    const spotify = await signIn('spotify');
    assert.equal(spotify.res.status, 200, spotify.res.text);
    assert.deepEqual(record(spotify.res), { extId: 'wizzler', name: 'JM Wizzler', handle: '', picture: 'https://i.scdn.example/wiz.jpg', email: '', verified: false });
    // Signing in again finds the same account through the link.
    const again = await signIn('spotify');
    assert.equal(again.res.body.record.id, spotify.res.body.record.id);
    assert.equal(again.res.body.meta.isNew, false);
  });

  test("an account the vendor says is inactive does not sign in; a missing address list is no error", async () => {
    answers.set('/box/me', { id: '11446498', name: 'Aaron Levie', login: 'ceo@box.example', status: 'inactive' });
    const box = await signIn('box');
    assert.equal(box.res.status, 400);
    assert.match(box.res.body.message, /Box user account is not active/);

    answers.set('/bitbucket/me', { uuid: '{c0ffee}', username: 'bb', display_name: 'Bit Bucket', account_status: 'closed' });
    const closed = await signIn('bitbucket');
    assert.equal(closed.res.status, 400);
    assert.match(closed.res.body.message, /not active/);
    assert.equal(closed.requests.length, 1, 'no address is asked for');

    // GitLab gives the address only once it is confirmed.
    answers.set('/gitlab/me', { id: 1, username: 'jsmith', name: 'John Smith', email: 'john@gitlab.example', confirmed_at: null, avatar_url: 'https://gitlab.example/j.png' });
    const gitlab = await signIn('gitlab');
    assert.equal(gitlab.res.status, 200, gitlab.res.text);
    assert.deepEqual(record(gitlab.res), { extId: '1', name: 'John Smith', handle: 'jsmith', picture: 'https://gitlab.example/j.png', email: '', verified: false });
    answers.set('/gitlab/me', { id: 2, username: 'jane', name: 'Jane', email: 'jane@gitlab.example', confirmed_at: '2012-05-23T09:05:22Z' });
    const confirmed = await signIn('gitlab');
    assert.equal(record(confirmed.res).email, 'jane@gitlab.example');
  });
});
