import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';
import { apply, saveMigration } from '../migrations/helpers.ts';

// How records answer where PocketBase v0.39 decides (API contract §19): the manage rule and emails,
// `expand` of relations with nothing to show, ids across auth collections, filter errors and views
// whose id is a computed number.
describe('PocketBase v0.39 record answers', () => {
  let server: TestServer;
  const password = 'pass-word-12345';
  const signIn = async (collection: string, email: string) => {
    const res = await server.request('POST', `/api/collections/${collection}/auth-with-password`, { body: { identity: email, password } });
    assert.equal(res.status, 200, res.text);
    return res.body.token as string;
  };
  const add = async (collection: string, body: Record<string, unknown>) => {
    const res = await server.admin('POST', `/api/collections/${collection}/records`, { body });
    assert.equal(res.status, 200, res.text);
    return res.body as { id: string };
  };
  let coach: string;
  let player: string;
  let quietId: string;
  let loudId: string;

  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'coaches', type: 'auth', fields: [], listRule: '', viewRule: '' });
    // Coaches manage players; players see one another.
    await createCollection(server, {
      name: 'players',
      type: 'auth',
      fields: [],
      listRule: '@request.auth.id != ""',
      viewRule: '@request.auth.id != ""',
      updateRule: "@request.auth.collectionName = 'coaches'",
      manageRule: "@request.auth.collectionName = 'coaches'",
    });
    await createCollection(server, { name: 'lockers', type: 'base', fields: [{ name: 'code', type: 'text' }], listRule: null, viewRule: null });
    await createCollection(server, {
      name: 'games',
      type: 'base',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'captain', type: 'relation', collectionId: 'players', maxSelect: 1 },
        { name: 'locker', type: 'relation', collectionId: 'lockers', maxSelect: 1 },
      ],
      listRule: '',
      viewRule: '',
      createRule: '',
    });
    await add('coaches', { email: 'coach@example.com', password, passwordConfirm: password });
    quietId = (await add('players', { email: 'quiet@example.com', emailVisibility: false, password, passwordConfirm: password })).id;
    loudId = (await add('players', { email: 'loud@example.com', emailVisibility: true, password, passwordConfirm: password })).id;
    coach = await signIn('coaches', 'coach@example.com');
    player = await signIn('players', 'loud@example.com');
    const locker = await add('lockers', { code: '12' });
    await add('games', { title: 'final', captain: quietId, locker: locker.id });
    await add('games', { title: 'friendly' });
  });
  after(() => server.close());

  test('a caller the manage rule lets through sees the email of the records it manages, hidden or not', async () => {
    const list = await server.request('GET', '/api/collections/players/records', { token: coach });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.items.map((r: { email?: string }) => r.email),
      ['quiet@example.com', 'loud@example.com'],
    );
    const one = await server.request('GET', `/api/collections/players/records/${quietId}`, { token: coach });
    assert.equal(one.body.email, 'quiet@example.com');
    assert.equal(one.body.emailVisibility, false);
    const expanded = await server.request('GET', '/api/collections/games/records?filter=title="final"&expand=captain', { token: coach });
    assert.equal(expanded.body.items[0].expand.captain.email, 'quiet@example.com');
    const changed = await server.request('PATCH', `/api/collections/players/records/${quietId}`, { token: coach, body: { name: 'Q' } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal(changed.body.email, 'quiet@example.com');
  });

  test('others see a hidden email only on their own record', async () => {
    const list = await server.request('GET', '/api/collections/players/records', { token: player });
    assert.deepEqual(
      list.body.items.map((r: { email?: string }) => r.email),
      [undefined, 'loud@example.com'],
    );
    const guest = await server.request('GET', '/api/collections/games/records?filter=title="final"&expand=captain');
    assert.deepEqual(guest.body.items[0].expand, {}, 'players are not visible to guests: an empty expand');
    assert.ok(!guest.text.includes('quiet@example.com'));
  });

  test('a path naming a relation gives each record an expand, empty when nothing is there to show', async () => {
    const res = await server.request('GET', '/api/collections/games/records?sort=title&expand=nothing_here,captain,locker', { token: player });
    assert.equal(res.status, 200, res.text);
    const [final, friendly] = res.body.items;
    assert.equal(final.expand.captain.id, quietId);
    assert.equal(final.expand.locker, undefined, 'lockers are for superusers only');
    assert.deepEqual(friendly.expand, {});
    const none = await server.request('GET', '/api/collections/games/records?expand=nothing_here', { token: player });
    assert.ok(
      none.body.items.every((r: Record<string, unknown>) => !('expand' in r)),
      'a path naming no relation leaves expand out',
    );
    const created = await server.request('POST', '/api/collections/games/records?expand=captain', { token: player, body: { title: 'new' } });
    assert.equal(created.status, 200, created.text);
    assert.deepEqual(created.body.expand, {});
  });

  test('realtime messages show the manager the email of a record it manages, its delete too; others not', async () => {
    const watch = async (token: string) => {
      const stream = await SseStream.open(server.url);
      assert.equal((await subscribeRaw(server.url, stream.clientId, ['players/*'], { token })).status, 204);
      return stream;
    };
    const asCoach = await watch(coach);
    const asPlayer = await watch(player);
    try {
      // Several rounds: each message is judged on the record it carries, even when the delete that
      // follows has committed before the message is judged (a race that one round rarely loses).
      for (let round = 0; round < 15; round++) {
        const shy = await add('players', { email: 'shy@example.com', emailVisibility: false, password, passwordConfirm: password });
        assert.equal((await server.admin('PATCH', `/api/collections/players/records/${shy.id}`, { body: { name: 'Shy' } })).status, 200);
        assert.equal((await server.admin('DELETE', `/api/collections/players/records/${shy.id}`)).status, 204);
        const seen = async (stream: SseStream) => {
          await waitFor(() => stream.messages().filter((m) => m.record.id === shy.id).length === 3, { what: 'the create, update and delete' });
          return stream.messages().filter((m) => m.record.id === shy.id).map((m) => `${m.action} ${m.record.email}`);
        };
        assert.deepEqual(await seen(asCoach), ['create shy@example.com', 'update shy@example.com', 'delete shy@example.com'], `round ${round}`);
        assert.deepEqual(await seen(asPlayer), ['create undefined', 'update undefined', 'delete undefined'], `round ${round}`);
      }
    } finally {
      asCoach.close();
      asPlayer.close();
    }
  });

  test('an auth record may not take an id a record of another auth collection has', async () => {
    const res = await server.admin('POST', '/api/collections/coaches/records', { body: { id: loudId, email: 'twin@example.com', password, passwordConfirm: password } });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.id.code, 'validation_invalid_auth_id');
    assert.equal((await server.admin('GET', `/api/collections/coaches/records?filter=id="${loudId}"`)).body.totalItems, 0);
    const base = await server.admin('POST', '/api/collections/lockers/records', { body: { id: loudId, code: 'x' } });
    assert.equal(base.status, 200, 'a base collection is not concerned');
  });

  test('a filter or sort naming an unknown field is a 400 with empty data and the problem in the message', async () => {
    for (const query of ['filter=nope~"x"', 'sort=nope']) {
      const res = await server.request('GET', `/api/collections/games/records?${query}`);
      assert.equal(res.status, 400, query);
      assert.deepEqual(res.body.data, {}, query);
      assert.match(res.body.message, /nope/, query);
    }
  });

  test('a view whose id is a computed number serves it as a text id', async () => {
    const version = await saveMigration(server, {
      name: 'numbered games',
      databases: {
        main: {
          collections: {
            numbered_games: {
              create_views: [{ name: 'numbered_games', sql: 'SELECT (ROW_NUMBER() OVER (ORDER BY title)) AS id, title FROM games' }],
              update_rules: { list: '', view: '' },
            },
          },
        },
      },
    });
    assert.equal((await apply(server, version)).status, 200);
    const list = await server.request('GET', '/api/collections/numbered_games/records?sort=id');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.body.items.map((r: { id: unknown }) => r.id),
      ['1', '2', '3'],
    );
    const one = await server.request('GET', '/api/collections/numbered_games/records/2');
    assert.equal(one.status, 200, one.text);
    assert.equal(one.body.id, '2');
    assert.equal(one.body.title, 'friendly');
  });
});

describe("PocketBase v0.39's own cron jobs, OAuth2 provider names and UI extensions", () => {
  let server: TestServer;

  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('GET /api/crons lists the server’s maintenance jobs under PocketBase’s ids, for superusers', async () => {
    const res = await server.admin('GET', '/api/crons');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.slice(0, 4), [
      { id: '__pbLogsCleanup__', expression: '0 */6 * * *' },
      { id: '__pbDBOptimize__', expression: '0 0 * * *' },
      { id: '__pbMFACleanup__', expression: '0 * * * *' },
      { id: '__pbOTPCleanup__', expression: '0 * * * *' },
    ]);
    assert.equal((await server.request('GET', '/api/crons')).status, 401);
  });

  test('each of them runs now by id', async () => {
    for (const id of ['__pbLogsCleanup__', '__pbDBOptimize__', '__pbMFACleanup__', '__pbOTPCleanup__']) {
      const res = await server.admin('POST', `/api/crons/${id}`);
      assert.equal(res.status, 204, `${id}: ${res.text}`);
    }
    assert.equal((await server.admin('POST', '/api/crons/__pbNoSuchJob__')).status, 404);
  });

  test('automatic backups are listed as __pbAutoBackup__ when they are on', async () => {
    const withBackups = await startServer({ env: { CAIRN_BACKUP_CRON: '30 3 * * *' } });
    try {
      const res = await withBackups.admin('GET', '/api/crons');
      const auto = res.body.find((j: { id: string }) => j.id === '__pbAutoBackup__');
      if (withBackups.services.backups.unsupported()) assert.equal(auto, undefined);
      else assert.deepEqual(auto, { id: '__pbAutoBackup__', expression: '30 3 * * *' });
    } finally {
      await withBackups.close();
    }
  });

  test('the OAuth2 provider names include the generic OIDC slots, each with a logo and no URLs', async () => {
    const res = await server.admin('GET', '/api/collections/meta/oauth2-providers');
    assert.equal(res.status, 200, res.text);
    const names = res.body.map((p: { name: string }) => p.name);
    for (const name of ['google', 'github', 'oidc', 'oidc2', 'oidc3']) assert.ok(names.includes(name), name);
    for (const p of res.body) {
      assert.deepEqual(Object.keys(p), ['name', 'displayName', 'logo']);
      assert.match(p.logo, /^<svg /);
    }
    assert.equal(res.body.find((p: { name: string }) => p.name === 'oidc3').displayName, 'OIDC');
  });

  test('/_/extensions.js is an empty script: the dashboard has no UI extensions', async () => {
    const res = await server.request('GET', '/_/extensions.js');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/javascript');
    assert.equal(res.text, '');
  });
});
