import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { USERS_OWN_RECORD_RULE } from '../../src/collections/service.ts';
import { PgWireProxy } from '../helpers/pg-wire.ts';
import { databaseUrlFor, dropDatabaseFor, skipOn } from '../helpers/postgres.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * On PostgreSQL a record write whose statement is the last thing it writes is sent alone, without
 * BEGIN and COMMIT (docs/postgres.md#one-statement-writes); one that writes more in its transaction
 * (a webhook trigger's outbox row) keeps them; a view of the caller's own account reads it once. Seen
 * on the wire, through a proxy in front of PostgreSQL.
 */
describe('records on PostgreSQL: statements on the wire', { skip: skipOn('sqlite', 'round trips to PostgreSQL') }, () => {
  let dir: string;
  let proxy: PgWireProxy;
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-round-trips-'));
    proxy = await PgWireProxy.start(await databaseUrlFor(dir));
    receiver = await startReceiver();
    server = await startServer({ dir, env: { CAIRN_DATABASE_URL: proxy.url, CAIRN_REQUEST_LOGS: 'off' } });
    const open = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };
    await createCollection(server, { name: 'plain', fields: [{ name: 'title', type: 'text' }], ...open });
    await createCollection(server, { name: 'targets', fields: [{ name: 'title', type: 'text' }], ...open });
    await createCollection(server, {
      name: 'linked',
      fields: [{ name: 'title', type: 'text' }, { name: 'to', type: 'relation', options: { toCollection: 'targets', maxSelect: 2 } }],
      ...open,
    });
    await createCollection(server, {
      name: 'watched',
      fields: [{ name: 'title', type: 'text' }],
      ...open,
      options: { triggers: [{ action: 'create', url: `${receiver.url}/created`, method: 'POST' }] },
    });
  });
  after(async () => {
    await server.close();
    await receiver.close();
    await proxy.close();
    rmSync(dir, { recursive: true, force: true });
    await dropDatabaseFor(dir);
  });

  /** The transaction control `write` sent (simple queries naming BEGIN, COMMIT or ROLLBACK). */
  async function controlOf(write: () => Promise<void>): Promise<string[]> {
    proxy.reset();
    await write();
    return proxy.log.queries.filter((q) => /^(BEGIN|COMMIT|ROLLBACK)\b/i.test(q));
  }

  const create = async (collection: string, title: string): Promise<string> => {
    const res = await server.request('POST', `/api/collections/${collection}/records`, { body: { title } });
    assert.equal(res.status, 200, res.text);
    return res.body.id;
  };

  test('a plain create, update and delete: their statement alone', async () => {
    await create('plain', 'warm-up');
    let id = '';
    assert.deepEqual(await controlOf(async () => void (id = await create('plain', 'one'))), []);
    assert.deepEqual(
      await controlOf(async () => {
        const res = await server.request('PATCH', `/api/collections/plain/records/${id}`, { body: { title: 'two' } });
        assert.equal(res.status, 200, res.text);
      }),
      // An update reads the stored row first: BEGIN travels with that read, COMMIT with the UPDATE.
      ['BEGIN', 'COMMIT'],
    );
    assert.deepEqual(
      await controlOf(async () => {
        assert.equal((await server.request('DELETE', `/api/collections/plain/records/${id}`)).status, 204);
      }),
      [],
    );
    assert.equal((await server.request('GET', `/api/collections/plain/records/${id}`)).status, 404);
  });

  test('a create with related ids checks them in its INSERT: one statement, and a missing id is a 400 that writes nothing', async () => {
    const a = await create('targets', 'a');
    const b = await create('targets', 'b');
    const post = (to: string[]) => server.request('POST', '/api/collections/linked/records', { body: { title: 'l', to } });
    assert.equal((await post([a])).status, 200);
    let res: Awaited<ReturnType<typeof post>> | undefined;
    assert.deepEqual(await controlOf(async () => void (res = await post([a, b]))), []);
    assert.equal(res!.status, 200, res!.text);
    assert.deepEqual(res!.body.to, [a, b]);
    const before = (await server.request('GET', '/api/collections/linked/records')).body.totalItems;
    const refused = await post([a, 'missingid000000']);
    assert.equal(refused.status, 400);
    assert.equal(refused.body.data.to.code, 'validation_missing_rel_records');
    assert.equal((await server.request('GET', '/api/collections/linked/records')).body.totalItems, before);
  });

  test('a create rule over the request alone is checked by the INSERT: one statement; a rule reading the row keeps the transaction', async () => {
    const open = { listRule: '', viewRule: '', updateRule: '', deleteRule: '' };
    await createCollection(server, { name: 'signed', fields: [{ name: 'title', type: 'text' }, { name: 'to', type: 'relation', options: { toCollection: 'targets' } }], ...open, createRule: '@request.auth.id != "" && @request.body.title != ""' });
    await createCollection(server, { name: 'titled', fields: [{ name: 'title', type: 'text' }], ...open, createRule: 'title = "ok"' });
    const user = await createUser(server, 'creator@example.com');
    const target = await create('targets', 'target');
    const post = (collection: string, body: Record<string, unknown>, token?: string) => server.request('POST', `/api/collections/${collection}/records`, { body, token });
    const count = async (collection: string) => (await server.request('GET', `/api/collections/${collection}/records`)).body.totalItems as number;
    assert.equal((await post('signed', { title: 'warm-up' }, user.token)).status, 200);

    let res: Awaited<ReturnType<typeof post>> | undefined;
    assert.deepEqual(await controlOf(async () => void (res = await post('signed', { title: 'mine', to: target }, user.token))), []);
    assert.equal(res!.status, 200, res!.text);
    assert.equal(res!.body.to, target);
    const before = await count('signed');
    const guest = await post('signed', { title: 'a guest' });
    assert.equal(guest.status, 400);
    assert.equal(guest.body.message, 'Failed to create record.');
    assert.equal((await post('signed', { title: '' }, user.token)).status, 400, 'the rule reads the body');
    // A missing related id is named, as before, whether or not the rule holds.
    const missing = await post('signed', { title: 'x', to: 'missingid000000' }, user.token);
    assert.equal(missing.status, 400);
    assert.equal(missing.body.data.to.code, 'validation_missing_rel_records');
    assert.equal(await count('signed'), before, 'no refused create wrote a row');

    assert.equal((await post('titled', { title: 'ok' })).status, 200);
    assert.deepEqual(await controlOf(async () => void (res = await post('titled', { title: 'ok' }))), ['BEGIN', 'COMMIT']);
    assert.equal(res!.status, 200, res!.text);
    assert.equal((await post('titled', { title: 'no' })).status, 400);
    assert.equal(await count('titled'), 2);
  });

  test('a create whose webhook trigger queues an event keeps its transaction, and the event is delivered', async () => {
    await create('watched', 'warm-up');
    proxy.reset();
    const id = await create('watched', 'seen');
    // The webhook worker writes its deliveries in transactions of its own on other connections: only the
    // connection that inserted the record counts.
    assert.deepEqual(proxy.controlAround(/INSERT INTO "watched"/i), ['BEGIN', 'COMMIT']);
    const received = await receiver.waitForRequests(2);
    assert.ok(received.some((r) => r.json.record?.id === id));
    // The worker's own writes (both deliveries' logs) are done before the next test counts statements.
    await waitFor(async () => (await server.admin('GET', '/api/webhooks/logs?perPage=1')).body.totalItems >= 2, { what: 'both deliveries logged' });
  });

  test("a view of the caller's own account answers from the row its token was checked against: one read", async () => {
    const users = await server.admin('GET', '/api/collections/users');
    assert.equal(users.status, 200, users.text);
    const fields = [...users.body.fields, { name: 'nickname', type: 'text' }];
    assert.equal((await server.admin('PATCH', '/api/collections/users', { body: { viewRule: '', updateRule: 'id = @request.auth.id', fields } })).status, 200);
    const me = await createUser(server, 'me@example.com');
    const other = await createUser(server, 'other@example.com');
    // Reads of the users table: other statements (the webhook worker's polls) are not the view's.
    const usersReads = () => proxy.executed(/ FROM "users" /);
    const view = (id: string, token = me.token) => server.request('GET', `/api/collections/users/records/${id}`, { token });
    assert.equal((await view(me.id)).status, 200);

    proxy.reset();
    const own = await view(me.id);
    const ownReads = usersReads();
    proxy.reset();
    const others = await view(other.id);
    const otherReads = usersReads();
    assert.equal(own.status, 200, own.text);
    assert.equal(others.status, 200, others.text);
    // The token's account is read either way; only another's record needs a second read.
    assert.equal(ownReads, 1);
    assert.equal(otherReads, 2);

    assert.equal(own.body.id, me.id);
    assert.equal(own.body.email, 'me@example.com', 'the owner sees its email');
    assert.equal(others.body.email, undefined, "another's email stays hidden");
    for (const secret of ['tokenKey', 'password', 'passwordHash']) assert.equal(own.body[secret], undefined, secret);
    const admin = await server.admin('GET', `/api/collections/users/records/${me.id}`);
    assert.deepEqual(own.body, admin.body, 'the same record an administrator reads');

    // PocketBase's and Cairn's default rule for users, decided from the caller: still one read; a rule
    // that also reads the record is checked against it.
    assert.equal((await server.admin('PATCH', '/api/collections/users', { body: { viewRule: USERS_OWN_RECORD_RULE } })).status, 200);
    assert.equal((await view(me.id)).status, 200);
    proxy.reset();
    assert.equal((await view(me.id)).status, 200);
    assert.equal(usersReads(), 1, 'the default rule');
    proxy.reset();
    assert.equal((await view(other.id)).status, 404);
    assert.equal(usersReads(), 2, "another's account under the default rule");
    assert.equal((await server.admin('PATCH', '/api/collections/users', { body: { viewRule: 'id = @request.auth.id && verified = false' } })).status, 200);
    assert.equal((await view(me.id)).status, 200);
    proxy.reset();
    assert.equal((await view(me.id)).status, 200);
    assert.equal(usersReads(), 2, 'a rule that reads the record');
    assert.equal((await server.admin('PATCH', '/api/collections/users', { body: { viewRule: '' } })).status, 200);

    // Each request reads its own row: a change shows in the next view at once.
    assert.equal((await server.request('PATCH', `/api/collections/users/records/${me.id}`, { token: me.token, body: { nickname: 'changed' } })).status, 200);
    assert.equal((await view(me.id)).body.nickname, 'changed');
  });
});
