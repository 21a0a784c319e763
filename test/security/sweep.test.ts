// through-tsx: a TypeScript hook it loads imports `cairn`, which must be this process's own src/index.ts (a bundle holds a copy)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { type AppDir, appDir } from '../hooks/app-dir.ts';
import { apply, saveMigration } from '../migrations/helpers.ts';

/**
 * The sweep of API contract §20 (issue 36): for every way a value reaches a rule (`@request.body`,
 * query, headers, modifiers, multipart, `@jsonPayload`, batch) and every way a record leaves (view,
 * list, expand, back-relations, `fields`, realtime, search, batch answers, hooks' enrich), a guest and another user
 * learn nothing they may not see and change nothing they may not change. Alice's private vault and
 * every hidden value carry canary strings; no answer to Mallory or a guest may contain one.
 */
describe('security sweep: guests and other users learn and change nothing', () => {
  let server: TestServer;
  let app: AppDir;
  let alice: { token: string; id: string };
  let mallory: { token: string; id: string };
  let vault: string;
  let note: string;
  let malloryVault: string;
  const CANARIES = ['CANARY-VAULT-TITLE', 'CANARY-VAULT-SECRET', 'CANARY-NOTE-PIN', 'canarypin'];
  const leaks: string[] = [];
  const streams: SseStream[] = [];

  /** Records a leak when `text` (an answer to a guest or Mallory) carries a canary. */
  function check(what: string, text: string) {
    for (const c of CANARIES) if (text.includes(c)) leaks.push(`${what}: ${c}`);
  }

  before(async () => {
    // A naive enrich hook echoing the outgoing record: it must be given only what the receiver may see.
    app = appDir({
      'enrich.ts': `import { defineHooks } from 'cairn';
export default defineHooks((app) => {
  for (const c of ['notes', 'vaults']) app.onRecordEnrich(async (e) => { e.record.echo = JSON.stringify(e.record); await e.next(); }, c);
});
`,
    });
    server = await startServer({ env: { CAIRN_HOOKS_DIR: app.hooks } });
    alice = await createUser(server, 'alice@example.com');
    mallory = await createUser(server, 'mallory@example.com');
    await createCollection(server, {
      name: 'vaults',
      fields: [
        { name: 'owner', type: 'relation', options: { toCollection: 'users', maxSelect: 1 } },
        { name: 'title', type: 'text' },
        { name: 'secret', type: 'text', hidden: true },
        { name: 'credits', type: 'number' },
        { name: 'tags', type: 'select', options: { values: ['a', 'b', 'vip'], maxSelect: 3 } },
      ],
      listRule: 'owner = @request.auth.id',
      viewRule: 'owner = @request.auth.id',
      createRule: '@request.auth.id != "" && owner = @request.auth.id && @request.body.credits:isset = false && @request.body.tags:isset = false',
      updateRule: 'owner = @request.auth.id && @request.body.credits:isset = false && @request.body.tags:isset = false && @request.body.owner:isset = false',
      deleteRule: 'owner = @request.auth.id',
    });
    await createCollection(server, {
      name: 'notes',
      fields: [
        { name: 'vault', type: 'relation', options: { toCollection: 'vaults', maxSelect: 1 } },
        { name: 'text', type: 'text' },
        { name: 'pin', type: 'text', hidden: true },
      ],
      listRule: '',
      viewRule: '',
      createRule: '@request.auth.id != ""',
      updateRule: '@request.headers.x_note_key = "letmein" && @request.query.key = "letmein" && vault.owner = @request.auth.id',
    });
    vault = (await server.admin('POST', '/api/collections/vaults/records', { body: { owner: alice.id, title: 'CANARY-VAULT-TITLE', secret: 'CANARY-VAULT-SECRET', credits: 100, tags: ['vip'] } })).body.id;
    malloryVault = (await server.admin('POST', '/api/collections/vaults/records', { body: { owner: mallory.id, title: 'mallory', credits: 1 } })).body.id;
    note = (await server.admin('POST', '/api/collections/notes/records', { body: { vault, text: 'public words', pin: 'CANARY-NOTE-PIN canarypin' } })).body.id;
    const version = await saveMigration(server, { name: 'notes search', databases: { main: { collections: { notes: { create_fts: { fields: ['text', 'pin'] } } } } } });
    assert.equal((await apply(server, version)).status, 200);
  });
  after(async () => {
    for (const s of streams) s.close();
    await server.close();
    app.remove();
  });

  const callers = () => [
    ['guest', null],
    ['mallory', mallory.token],
  ] as const;

  test('every way a record leaves: view, list, expand, back-relations, fields, search, batch answers', async () => {
    const reads = [
      `/api/collections/vaults/records/${vault}`,
      '/api/collections/vaults/records',
      `/api/collections/vaults/records?filter=${encodeURIComponent('title ~ "CANARY"')}`,
      `/api/collections/vaults/records?fields=${encodeURIComponent('*,secret,expand.*')}`,
      `/api/collections/notes/records/${note}?expand=vault`,
      `/api/collections/notes/records?expand=vault,vault.owner&fields=${encodeURIComponent('*,pin,expand.vault.secret,expand.vault.title')}`,
      `/api/collections/users/records/${alice.id}?expand=vaults_via_owner,vaults_via_owner.notes_via_vault`,
      `/api/collections/notes/records?expand=vault.notes_via_vault`,
      '/api/collections/notes/records?search=canarypin',
      `/api/collections/notes/records?search=${encodeURIComponent('public canarypin')}`,
      `/api/collections/notes/records?filter=${encodeURIComponent('pin ~ "canary"')}`,
      `/api/collections/notes/records?sort=pin`,
      `/api/collections/notes/records?filter=${encodeURIComponent('vault.secret ~ "CANARY"')}`,
      `/api/collections/notes/records?filter=${encodeURIComponent('vault.title ~ "CANARY"')}`,
    ];
    for (const [who, token] of callers()) {
      for (const path of reads) {
        const res = await server.request('GET', path, { token });
        assert.ok(res.status < 500, `${who} ${path}: ${res.status}`);
        check(`${who} GET ${path}`, res.text);
        // A filter on what the caller may not read matches nothing (or is refused).
        if (/filter=/.test(path) && res.status === 200) assert.equal(res.body.items.length, 0, `${who} ${path} matched`);
      }
      // Search by the hidden value: the same answer as a wrong guess.
      const hit = await server.request('GET', '/api/collections/notes/records?search=canarypin', { token });
      const miss = await server.request('GET', '/api/collections/notes/records?search=wrongguess', { token });
      assert.equal(hit.body.items.length, miss.body.items.length, `${who}: search is an oracle`);
      // Batch answers (a write with expand and fields, then a read-back by the answer).
      const batch = await server.request('POST', '/api/batch', {
        token,
        body: { requests: [{ method: 'POST', url: '/api/collections/notes/records?expand=vault&fields=*,pin,expand.vault.secret', body: { vault, text: 'by batch' } }] },
      });
      check(`${who} batch answer`, batch.text);
    }
    // The enrich hook ran on what left (so its echo was checked too).
    assert.match((await server.request('GET', `/api/collections/notes/records/${note}?expand=vault`)).text, /"echo":/);
    // The administrator does see them (the canaries are where the test thinks).
    const admin = await server.admin('GET', `/api/collections/notes/records/${note}?expand=vault`);
    assert.ok(admin.text.includes('CANARY-NOTE-PIN') && admin.text.includes('CANARY-VAULT-TITLE'));
    assert.deepEqual(leaks, []);
  });

  test('realtime: collection and record topics, with expand and fields in the options', async () => {
    const opts = encodeURIComponent(JSON.stringify({ query: { expand: 'vault', fields: '*,pin,expand.vault.secret,expand.vault.title' } }));
    const topics = ['vaults/*', `vaults/${vault}`, 'notes/*', `notes/${note}?options=${opts}`, `notes/*?options=${opts}`];
    const clients: SseStream[] = [];
    for (const [, token] of callers()) {
      const s = await SseStream.open(server.url);
      streams.push(s);
      const res = await subscribeRaw(server.url, s.clientId, topics, { token: token ?? undefined });
      assert.equal(res.status, 204, JSON.stringify(res.body));
      clients.push(s);
    }
    await server.admin('PATCH', `/api/collections/vaults/records/${vault}`, { body: { credits: 101 } });
    await server.admin('PATCH', `/api/collections/notes/records/${note}`, { body: { text: 'public words again' } });
    for (const s of clients) {
      await s.next((e) => e.event.startsWith('notes') && e.data.includes('public words again'), 'the note update');
      for (const e of s.events) check(`realtime ${e.event}`, e.data);
      assert.ok(!s.events.some((e) => e.event.startsWith('vaults')), 'a vault event reached a caller who may not see it');
    }
    assert.deepEqual(leaks, []);
  });

  test('every way a value reaches a rule: body, query, headers, modifiers, multipart, @jsonPayload, batch', async () => {
    // The vaults as stored, but for `updated` (the hidden-field check below writes Mallory's own vault)
    // and the enrich hook's echo.
    const vaults = async () => JSON.stringify((await server.admin('GET', `/api/collections/vaults/records?sort=created`)).body.items.map(({ updated: _, echo: __, ...r }: any) => r));
    const before = await vaults();
    const noteState = async () => {
      const { echo: _, ...r } = (await server.admin('GET', `/api/collections/notes/records/${note}`)).body;
      return JSON.stringify(r);
    };
    const beforeNote = await noteState();
    const writes: Array<[string, string, Record<string, unknown>]> = [
      // Alice's vault: not Mallory's to change, by any body.
      ['PATCH', `/api/collections/vaults/records/${vault}`, { title: 'pwned' }],
      ['PATCH', `/api/collections/vaults/records/${vault}`, { 'credits+': 1 }],
      ['DELETE', `/api/collections/vaults/records/${vault}`, {}],
      // Mallory's own vault: the guarded fields stay, whatever form they take.
      ['PATCH', `/api/collections/vaults/records/${malloryVault}`, { credits: 5000 }],
      ['PATCH', `/api/collections/vaults/records/${malloryVault}`, { 'credits+': 5000 }],
      ['PATCH', `/api/collections/vaults/records/${malloryVault}`, { 'credits-': -5000 }],
      ['PATCH', `/api/collections/vaults/records/${malloryVault}`, { '+tags': 'vip' }],
      ['PATCH', `/api/collections/vaults/records/${malloryVault}`, { 'tags+': ['vip'] }],
      ['PATCH', `/api/collections/vaults/records/${malloryVault}`, { owner: alice.id }],
      ['POST', '/api/collections/vaults/records', { owner: alice.id, title: 'x' }],
      ['POST', '/api/collections/vaults/records', { owner: mallory.id, 'credits+': 5000 }],
      ['POST', '/api/collections/vaults/records', { owner: mallory.id, 'tags+': 'vip' }],
      // A rule reading query and headers: the wrong values, or the right ones by a non-owner, change nothing.
      ['PATCH', `/api/collections/notes/records/${note}?key=letmein`, { text: 'pwned' }],
      ['PATCH', `/api/collections/notes/records/${note}?key=nope`, { text: 'pwned' }],
    ];
    const headers = { 'x-note-key': 'letmein', 'x-forwarded-for': '127.0.0.1', 'x-auth-id': alice.id };
    for (const [who, token] of callers()) {
      for (const [method, url, body] of writes) {
        const json = await server.request(method, url, { token, body, headers });
        assert.ok(json.status >= 400 && json.status < 500, `${who} JSON ${method} ${url} ${JSON.stringify(body)}: ${json.status} ${json.text}`);
        check(`${who} ${method} ${url}`, json.text);
        if (method === 'DELETE') continue;
        const form = new FormData();
        for (const [k, v] of Object.entries(body)) form.append(k, Array.isArray(v) ? String(v[0]) : String(v));
        const multipart = await server.request(method, url, { token, raw: form, headers });
        assert.ok(multipart.status >= 400 && multipart.status < 500, `${who} multipart ${method} ${url} ${JSON.stringify(body)}: ${multipart.status}`);
        const payload = new FormData();
        payload.append('@jsonPayload', JSON.stringify(body));
        const jsonPayload = await server.request(method, url, { token, raw: payload, headers });
        assert.ok(jsonPayload.status >= 400 && jsonPayload.status < 500, `${who} @jsonPayload ${method} ${url} ${JSON.stringify(body)}: ${jsonPayload.status}`);
        const batch = await server.request('POST', '/api/batch', { token, body: { requests: [{ method, url, body, headers }] } });
        assert.ok(batch.status >= 400 && batch.status < 500, `${who} batch ${method} ${url} ${JSON.stringify(body)}: ${batch.status}`);
      }
    }
    // Hidden fields: Mallory's value is ignored, her own record keeps the stored one.
    const hidden = await server.request('PATCH', `/api/collections/vaults/records/${malloryVault}`, { token: mallory.token, body: { title: 'mallory', secret: 'set-by-mallory' } });
    assert.equal(hidden.status, 200, hidden.text);
    assert.equal((await server.admin('GET', `/api/collections/vaults/records/${malloryVault}`)).body.secret, '');

    assert.equal(await vaults(), before);
    assert.equal(await noteState(), beforeNote);
    assert.deepEqual(leaks, []);
  });
});
