import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

/**
 * The spec's role-based access example: a `roles` base collection (`name` required, `permissions`
 * json), users with a `role` field set by an administrator, and rules comparing the user's role;
 * plus the owner pattern `author = @request.auth.id`.
 */
describe('role-based access and the owner pattern', () => {
  let server: TestServer;
  let editor: { token: string; id: string };
  let reader: { token: string; id: string };

  before(async () => {
    server = await startServer();
    editor = await createUser(server, 'editor@example.com');
    reader = await createUser(server, 'reader@example.com');

    await createCollection(server, {
      name: 'roles',
      type: 'base',
      fields: [
        { name: 'name', type: 'text', required: true },
        { name: 'permissions', type: 'json' },
      ],
      listRule: '@request.auth.id != ""',
      viewRule: '@request.auth.id != ""',
    });
    for (const [name, permissions] of [
      ['editor', ['articles.create', 'articles.update', 'articles.delete']],
      ['reader', []],
    ] as const) {
      const res = await server.admin('POST', '/api/collections/roles/records', { body: { name, permissions } });
      assert.equal(res.status, 200, res.text);
    }
    // A role is assigned by setting `role` on the user record, which only administrators may do.
    const assigned = await server.admin('PATCH', `/api/collections/users/records/${editor.id}`, { body: { role: 'editor' } });
    assert.equal(assigned.status, 200, assigned.text);
    assert.equal(assigned.body.role, 'editor');

    await createCollection(server, {
      name: 'articles',
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'author', type: 'relation', options: { toCollection: 'users' } },
      ],
      listRule: '@request.auth.id != ""',
      viewRule: '@request.auth.id != ""',
      createRule: '@request.auth.role = "editor" && author = @request.auth.id',
      // The owner pattern, for editors only.
      updateRule: 'author = @request.auth.id && @request.auth.role = "editor"',
      // The permission is read from the user's role record in `roles`.
      deleteRule: '@collection.roles.name ?= @request.auth.role && @collection.roles.permissions ?~ "articles.delete" && author = @request.auth.id',
    });
  });
  after(() => server.close());

  test('the roles collection is the spec shape and `name` is required', async () => {
    const missing = await server.admin('POST', '/api/collections/roles/records', { body: { permissions: {} } });
    assert.equal(missing.status, 400);
    assert.equal(missing.body.data.name.code, 'validation_required');
    const list = await server.request('GET', '/api/collections/roles/records?sort=name', { token: reader.token });
    assert.deepEqual(
      list.body.items.map((r: { name: string }) => r.name),
      ['editor', 'reader'],
    );
  });

  test('an editor creates, updates and deletes their own articles', async () => {
    const created = await server.request('POST', '/api/collections/articles/records', { token: editor.token, body: { title: 'By the editor', author: editor.id } });
    assert.equal(created.status, 200, created.text);
    const updated = await server.request('PATCH', `/api/collections/articles/records/${created.body.id}`, { token: editor.token, body: { title: 'Edited' } });
    assert.equal(updated.status, 200, updated.text);
    assert.equal(updated.body.title, 'Edited');
    const deleted = await server.request('DELETE', `/api/collections/articles/records/${created.body.id}`, { token: editor.token });
    assert.equal(deleted.status, 204, deleted.text);
  });

  test('a user without the role reads but cannot write, nor write in the name of the editor', async () => {
    const denied = await server.request('POST', '/api/collections/articles/records', { token: reader.token, body: { title: 'By the reader', author: reader.id } });
    assert.equal(denied.status, 400);
    const impersonated = await server.request('POST', '/api/collections/articles/records', { token: editor.token, body: { title: 'Forged', author: reader.id } });
    assert.equal(impersonated.status, 400);
    const article = await server.admin('POST', '/api/collections/articles/records', { body: { title: 'Existing', author: editor.id } });
    const read = await server.request('GET', `/api/collections/articles/records/${article.body.id}`, { token: reader.token });
    assert.equal(read.status, 200);
    assert.equal((await server.request('PATCH', `/api/collections/articles/records/${article.body.id}`, { token: reader.token, body: { title: 'x' } })).status, 404);
    assert.equal((await server.request('DELETE', `/api/collections/articles/records/${article.body.id}`, { token: reader.token })).status, 404);
    assert.equal((await server.request('GET', '/api/collections/articles/records')).body.items.length, 0, 'guests see nothing');
    const titles = (await server.admin('GET', '/api/collections/articles/records')).body.items.map((a: { title: string }) => a.title);
    assert.deepEqual(titles, ['Existing']);
  });

  test('a user cannot raise their own role; an administrator can, and it applies at once', async () => {
    const raised = await server.request('PATCH', `/api/collections/users/records/${reader.id}`, { token: reader.token, body: { role: 'editor' } });
    assert.equal(raised.status, 400);
    assert.equal(raised.body.data.role.code, 'validation_admin_only');
    const registered = await server.request('POST', '/api/auth/register', {
      body: { email: 'sneaky@example.com', password: 'user-password-1', passwordConfirm: 'user-password-1', role: 'editor' },
    });
    assert.equal(registered.status, 200);
    assert.equal(registered.body.role, '');

    await server.admin('PATCH', `/api/collections/users/records/${reader.id}`, { body: { role: 'editor' } });
    const now = await server.request('POST', '/api/collections/articles/records', { token: reader.token, body: { title: 'Promoted', author: reader.id } });
    assert.equal(now.status, 200, now.text);
    await server.admin('PATCH', `/api/collections/users/records/${reader.id}`, { body: { role: 'reader' } });
    const again = await server.request('POST', '/api/collections/articles/records', { token: reader.token, body: { title: 'Demoted', author: reader.id } });
    assert.equal(again.status, 400);
  });

  test('the delete permission comes from the role record: without it, even the owner cannot delete', async () => {
    const roles = (await server.admin('GET', `/api/collections/roles/records?filter=${encodeURIComponent('name = "editor"')}`)).body.items;
    await server.admin('PATCH', `/api/collections/roles/records/${roles[0].id}`, { body: { permissions: ['articles.create', 'articles.update'] } });
    const article = await server.request('POST', '/api/collections/articles/records', { token: editor.token, body: { title: 'Keep', author: editor.id } });
    assert.equal(article.status, 200);
    assert.equal((await server.request('DELETE', `/api/collections/articles/records/${article.body.id}`, { token: editor.token })).status, 404);
    await server.admin('PATCH', `/api/collections/roles/records/${roles[0].id}`, { body: { permissions: ['articles.delete'] } });
    assert.equal((await server.request('DELETE', `/api/collections/articles/records/${article.body.id}`, { token: editor.token })).status, 204);
  });
});
