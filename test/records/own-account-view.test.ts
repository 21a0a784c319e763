import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { USERS_OWN_RECORD_RULE } from '../../src/collections/service.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';

/**
 * A view of the caller's own account answers from the row its token was checked against when the view
 * rule surely lets the caller through (src/rules/own-record.ts), and reads the record under the rule
 * otherwise: either way the answer is the rule's.
 */
describe("a view of one's own account", () => {
  let server: TestServer;
  let me: Awaited<ReturnType<typeof createUser>>;
  let other: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    server = await startServer();
    me = await createUser(server, 'me@example.com');
    other = await createUser(server, 'other@example.com');
  });
  after(() => server.close());

  const viewRule = async (rule: string) => assert.equal((await server.admin('PATCH', '/api/collections/users', { body: { viewRule: rule } })).status, 200);
  const view = (id: string) => server.request('GET', `/api/collections/users/records/${id}`, { token: me.token });

  test("under the default rule: one's own account with its email, nobody else's", async () => {
    await viewRule(USERS_OWN_RECORD_RULE);
    const own = await view(me.id);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.id, me.id);
    assert.equal(own.body.email, 'me@example.com');
    for (const secret of ['tokenKey', 'password', 'passwordHash']) assert.equal(own.body[secret], undefined, secret);
    assert.deepEqual(own.body, (await server.admin('GET', `/api/collections/users/records/${me.id}`)).body);
    assert.equal((await view(other.id)).status, 404);
  });

  test('a rule that also reads the record is checked against it', async () => {
    await viewRule('id = @request.auth.id && verified = true');
    assert.equal((await view(me.id)).status, 404, 'not verified yet');
    assert.equal((await server.admin('PATCH', `/api/collections/users/records/${me.id}`, { body: { verified: true } })).status, 200);
    const own = await view(me.id);
    assert.equal(own.status, 200, own.text);
    assert.equal(own.body.verified, true);
  });

  test('a rule the own account does not meet hides it, and one met through || shows it', async () => {
    await viewRule('id != @request.auth.id');
    assert.equal((await view(me.id)).status, 404);
    assert.equal((await view(other.id)).status, 200);
    await viewRule('@request.auth.collectionName = "admins" || id = @request.auth.id');
    assert.equal((await view(me.id)).status, 200);
    assert.equal((await view(other.id)).status, 404);
  });
});
