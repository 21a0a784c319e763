import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

// PocketBase lets an auth collection's `email` field be optional (`required: false`); its records may
// then be created without one (API contract §23). Where it is required, as by default, one is needed.
describe('auth records without an email where the collection allows it', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    const members = await createCollection(server, {
      name: 'members',
      type: 'auth',
      fields: [{ name: 'nick', type: 'text' }],
      // Where an import of PocketBase's collection keeps its system fields' definitions.
      options: { systemFields: [{ id: '_pbf_auth_email_', name: 'email', type: 'email', system: true, required: false, onlyDomains: null, exceptDomains: null }] },
      createRule: '',
    });
    assert.ok(members.id);
  });
  after(async () => {
    await server?.close();
  });

  test('a record is created without an email, and another one too (empty emails do not collide)', async () => {
    for (const nick of ['a', 'b']) {
      const made = await server.request('POST', '/api/collections/members/records', { body: { nick, password: 'password-123', passwordConfirm: 'password-123' } });
      assert.equal(made.status, 200, made.text);
      const viewed = await server.admin('GET', `/api/collections/members/records/${made.body.id}`);
      assert.equal(viewed.body.email, '');
    }
    const malformed = await server.request('POST', '/api/collections/members/records', { body: { email: 'not an email', password: 'password-123', passwordConfirm: 'password-123' } });
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.data.email.code, 'validation_is_email');
  });

  test('where the email is required (the default users), a create without one fails as PocketBase', async () => {
    const refused = await server.request('POST', '/api/collections/users/records', { body: { password: 'password-123', passwordConfirm: 'password-123' } });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.message, 'Failed to create record.');
    assert.equal(refused.body.status, 400);
    assert.equal(refused.body.data.email.code, 'validation_required');
  });
});
