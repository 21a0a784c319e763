import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { closeSdkClients, sdkClient } from '../helpers/sse.ts';

/**
 * Security invariant "write modifiers are values" (API contract §20, issue 36 hole 1): a rule that
 * guards a field holds whatever form of the field is sent. Each attack is sent as raw HTTP, the way
 * an attacker would: JSON, multipart, multipart with `@jsonPayload`, and batch.
 */
describe('write modifiers cannot sidestep a rule guarding the field', () => {
  let server: TestServer;
  let user: { token: string; id: string; user: Record<string, any> };
  let wallet: string;

  const stored = async () => (await server.admin('GET', `/api/collections/wallets/records/${wallet}`)).body;

  before(async () => {
    server = await startServer();
    user = await createUser(server, 'mallory@example.com');
    await createCollection(server, {
      name: 'wallets',
      fields: [
        { name: 'owner', type: 'text' },
        { name: 'credits', type: 'number' },
        { name: 'level', type: 'number' },
        { name: 'badges', type: 'select', options: { values: ['bronze', 'silver', 'gold'], maxSelect: 3 } },
      ],
      listRule: 'owner = @request.auth.id',
      viewRule: 'owner = @request.auth.id',
      createRule: '@request.auth.id != "" && owner = @request.auth.id && @request.body.credits:isset = false && @request.body.badges:isset = false',
      updateRule: 'owner = @request.auth.id && @request.body.credits:isset = false && @request.body.level:changed = false && @request.body.badges:isset = false',
    });
    const created = await server.admin('POST', '/api/collections/wallets/records', { body: { owner: user.id, credits: 7, level: 1, badges: ['bronze'] } });
    assert.equal(created.status, 200, created.text);
    wallet = created.body.id;
  });
  after(async () => {
    await closeSdkClients();
    await server.close();
  });

  const attacks: Record<string, unknown>[] = [{ 'credits+': 4000 }, { 'credits-': -4000 }, { '+badges': 'gold' }, { 'badges+': ['gold'] }, { 'level+': 10 }, { 'badges-': 'bronze' }];

  test('a plain update of a guarded field is refused, an unguarded one allowed (the rules work)', async () => {
    assert.equal((await server.request('PATCH', `/api/collections/wallets/records/${wallet}`, { token: user.token, body: { credits: 4007 } })).status, 404);
    assert.equal((await server.request('PATCH', `/api/collections/wallets/records/${wallet}`, { token: user.token, body: { level: 1 } })).status, 200);
  });

  test('JSON updates with modifiers are refused and write nothing', async () => {
    for (const body of attacks) {
      const res = await server.request('PATCH', `/api/collections/wallets/records/${wallet}`, { token: user.token, body });
      assert.equal(res.status, 404, `${JSON.stringify(body)}: ${res.text}`);
    }
    const after = await stored();
    assert.deepEqual([after.credits, after.level, after.badges], [7, 1, ['bronze']]);
  });

  test('multipart and @jsonPayload updates with modifiers are refused', async () => {
    for (const body of attacks) {
      const form = new FormData();
      for (const [k, v] of Object.entries(body)) form.append(k, String(v));
      const res = await server.request('PATCH', `/api/collections/wallets/records/${wallet}`, { token: user.token, raw: form });
      assert.equal(res.status, 404, `multipart ${JSON.stringify(body)}: ${res.text}`);
      const payload = new FormData();
      payload.append('@jsonPayload', JSON.stringify(body));
      const res2 = await server.request('PATCH', `/api/collections/wallets/records/${wallet}`, { token: user.token, raw: payload });
      assert.equal(res2.status, 404, `@jsonPayload ${JSON.stringify(body)}: ${res2.text}`);
    }
    const after = await stored();
    assert.deepEqual([after.credits, after.level, after.badges], [7, 1, ['bronze']]);
  });

  test('batch updates and creates with modifiers are refused', async () => {
    for (const body of attacks) {
      const res = await server.request('POST', '/api/batch', { token: user.token, body: { requests: [{ method: 'PATCH', url: `/api/collections/wallets/records/${wallet}`, body }] } });
      assert.equal(res.status, 400, `batch ${JSON.stringify(body)}: ${res.text}`);
    }
    const after = await stored();
    assert.deepEqual([after.credits, after.level, after.badges], [7, 1, ['bronze']]);
    const create = await server.request('POST', '/api/batch', { token: user.token, body: { requests: [{ method: 'POST', url: '/api/collections/wallets/records', body: { owner: user.id, 'credits+': 4000 } }] } });
    assert.equal(create.status, 400, create.text);
  });

  test('through the PocketBase SDK as an attacker would use it: update and create with modifiers are refused', async () => {
    const pb = sdkClient(server.url);
    pb.authStore.save(user.token, user.user as never);
    for (const body of attacks) {
      await assert.rejects(pb.collection('wallets').update(wallet, body), (err: any) => err.status === 404, JSON.stringify(body));
    }
    await assert.rejects(pb.collection('wallets').create({ owner: user.id, 'credits+': 4000 }), (err: any) => err.status === 400);
    const after = await stored();
    assert.deepEqual([after.credits, after.level, after.badges], [7, 1, ['bronze']]);
  });

  test('creates with modifiers are refused; a create without the guarded fields is allowed', async () => {
    for (const extra of [{ 'credits+': 4000 }, { 'credits-': -4000 }, { '+badges': 'gold' }, { 'badges+': ['gold'] }]) {
      const res = await server.request('POST', '/api/collections/wallets/records', { token: user.token, body: { owner: user.id, ...extra } });
      assert.equal(res.status, 400, `${JSON.stringify(extra)}: ${res.text}`);
      const form = new FormData();
      form.append('owner', user.id);
      for (const [k, v] of Object.entries(extra)) form.append(k, String(v));
      assert.equal((await server.request('POST', '/api/collections/wallets/records', { token: user.token, raw: form })).status, 400);
    }
    const ok = await server.request('POST', '/api/collections/wallets/records', { token: user.token, body: { owner: user.id, level: 2 } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.credits, 0);
  });

  test('@request.body.f reads the resolved value: a rule bounding it holds against a modifier', async () => {
    await createCollection(server, {
      name: 'counters',
      fields: [{ name: 'n', type: 'number' }],
      viewRule: '',
      updateRule: '@request.body.n <= 10',
    });
    const c = (await server.admin('POST', '/api/collections/counters/records', { body: { n: 8 } })).body;
    // 8 + 1 = 9 is allowed; 9 + 5 = 14 is not, although the 5 sent is below 10.
    const ok = await server.request('PATCH', `/api/collections/counters/records/${c.id}`, { body: { 'n+': 1 } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.n, 9);
    assert.equal((await server.request('PATCH', `/api/collections/counters/records/${c.id}`, { body: { 'n+': 5 } })).status, 404);
    assert.equal((await server.admin('GET', `/api/collections/counters/records/${c.id}`)).body.n, 9);
  });
});
