import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PocketBase, { ClientResponseError } from 'pocketbase';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox, tokenFrom } from '../helpers/smtp.ts';

/** The unmodified PocketBase JavaScript SDK 0.21 against a real Cairn server. */
describe('PocketBase JS SDK 0.21', () => {
  let inbox: Inbox;
  let server: TestServer;

  before(async () => {
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
    await createUser(server, 'sdk-user@example.com', 'sdk-password-1');
  });
  after(async () => {
    await server.close();
    await inbox.close();
  });

  test('admins.authWithPassword and admins.authRefresh', async () => {
    const pb = new PocketBase(server.url);
    const auth = await pb.admins.authWithPassword(ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal(auth.admin.email, ADMIN_EMAIL);
    assert.equal(pb.authStore.isValid, true);
    assert.equal(pb.authStore.isAdmin, true);
    const first = pb.authStore.token;
    await pb.admins.authRefresh();
    assert.notEqual(pb.authStore.token, first);
    // The SDK sends the stored token on management calls.
    const collections = await pb.collections.getFullList();
    assert.ok(collections.some((c) => c.name === 'users'));
  });

  test("collection('users').authWithPassword, authRefresh and a wrong password", async () => {
    const pb = new PocketBase(server.url);
    const auth = await pb.collection('users').authWithPassword('sdk-user@example.com', 'sdk-password-1');
    assert.equal(auth.record.email, 'sdk-user@example.com');
    assert.equal(pb.authStore.isAuthRecord, true);
    assert.equal(pb.authStore.model?.id, auth.record.id);
    const first = pb.authStore.token;

    const refreshed = await pb.collection('users').authRefresh();
    assert.equal(refreshed.record.id, auth.record.id);
    assert.notEqual(pb.authStore.token, first);
    assert.equal(pb.authStore.isValid, true);

    const methods = await pb.collection('users').listAuthMethods();
    assert.equal(methods.emailPassword, true);

    await assert.rejects(pb.collection('users').authWithPassword('sdk-user@example.com', 'wrong-password'), (err: unknown) => {
      assert.ok(err instanceof ClientResponseError);
      assert.equal(err.status, 401);
      assert.match(err.message, /Invalid credentials/);
      return true;
    });
  });

  test('requestVerification and confirmVerification', async () => {
    const pb = new PocketBase(server.url);
    assert.equal(await pb.collection('users').requestVerification('sdk-user@example.com'), true);
    const token = tokenFrom(await inbox.next('sdk-user@example.com', /Verify/));
    assert.equal(await pb.collection('users').confirmVerification(token), true);
    const auth = await pb.collection('users').authWithPassword('sdk-user@example.com', 'sdk-password-1');
    assert.equal(auth.record.verified, true);
  });
  test('requestPasswordReset and confirmPasswordReset', async () => {
    const pb = new PocketBase(server.url);
    assert.equal(await pb.collection('users').requestPasswordReset('sdk-user@example.com'), true);
    const token = tokenFrom(await inbox.next('sdk-user@example.com', /Reset/));
    assert.equal(await pb.collection('users').confirmPasswordReset(token, 'sdk-password-2', 'sdk-password-2'), true);
    const auth = await pb.collection('users').authWithPassword('sdk-user@example.com', 'sdk-password-2');
    assert.equal(auth.record.email, 'sdk-user@example.com');
  });

});
