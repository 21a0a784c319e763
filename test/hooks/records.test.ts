// through-tsx: a TypeScript hook it loads imports `cairn`, which must be this process's own src/index.ts (a bundle holds a copy)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';
import { type AppDir, appDir } from './app-dir.ts';

// A hook file as an application writes one: TypeScript, a module of its own in a subfolder, an npm
// package (yaml), and `cairn`'s errors. Behaviours are picked by the record's title.
const POSTS = `
import { BadRequestError, ForbiddenError, defineHooks } from 'cairn';
import { stringify } from 'yaml';
import { slugify } from './lib/slug.ts';

export default defineHooks((app) => {
  app.onRecordCreate(async (e) => {
    const title = String(e.record.title ?? '');
    if (title === 'cancel') return;
    if (title === 'slow') {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      // Past CAIRN_HOOK_TIMEOUT_MS: this write goes through the ended transaction and must fail.
      try {
        await e.app.records(e.db).create('audit', { what: 'late slow' });
        await e.next();
      } finally {
        (globalThis as Record<string, unknown>).slowHookEnded = true;
      }
      return;
    }
    e.record.slug = slugify(title);
    // Written in the write's transaction: gone with it when the write fails.
    await e.app.records(e.db).create('audit', { what: 'before ' + title });
    await e.next();
    if (!/^[a-z0-9]{15}$/.test(String(e.record.id)) || !e.record.created) throw new Error('no stored record after next()');
    if (title === 'refuse after') throw new BadRequestError('Refused after the write.', { title: { code: 'validation_refused', message: 'No.' } });
    if (title === 'crash after') throw new Error('internal detail that must not leak');
  }, 'posts');

  app.onRecordUpdate(async (e) => {
    e.record.edits = Number(e.original?.edits ?? 0) + 1;
    if (e.record.title === 'bad views') e.record.views = 'many';
    await e.next();
  }, 'posts');

  app.onRecordDelete(async (e) => {
    if (e.record.locked) throw new BadRequestError('Locked posts cannot be deleted.');
    await e.next();
  }, 'posts');

  app.onRecordAfterCreateSuccess(async (e) => {
    await e.app.records(e.db).create('audit', { what: 'created ' + e.record.title });
    if (e.record.title === 'after fails') throw new Error('after-success failure');
    await e.next();
  }, 'posts');

  app.onRecordEnrich(async (e) => {
    e.record.yaml = stringify({ t: e.record.title }).trim();
    e.record.viewer = e.auth ? e.auth.collectionName + ':' + e.auth.id : 'guest';
    if (e.auth?.collectionName !== '_superusers') delete e.record.secret;
    await e.next();
  }, 'posts');

  app.onRecordCreate(async (e) => {
    e.record.name = 'Named by a hook';
    await e.next();
  }, 'users');

  app.onRecordUpdate(async (e) => {
    if (e.record.verified && !e.original?.verified) await e.app.records(e.db).create('audit', { what: 'verified ' + e.record.email });
    await e.next();
  }, 'users');

  app.onRecordAuthRequest(async (e) => {
    await e.app.records().create('audit', { what: 'superuser ' + e.method + ' ' + e.collection.name });
    await e.next();
  }, '_superusers');

  app.onRecordAuthRequest(async (e) => {
    if (String(e.record.email).startsWith('blocked')) throw new ForbiddenError('This account is blocked.');
    await e.app.records(e.db).create('audit', { what: e.method + ' ' + e.record.email + ' ' + (e.token ? 'token' : 'none') });
    await e.next();
  }, 'users');
});
`;

const SLUG = `export function slugify(text: string): string {
  return text.toLowerCase().trim().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}
`;

describe('hooks: record events', () => {
  let app: AppDir;
  let server: TestServer;
  const audit = async (): Promise<string[]> => {
    const res = await server.admin('GET', '/api/collections/audit/records?perPage=500&sort=created');
    return res.body.items.map((r: { what: string }) => r.what);
  };
  const titles = async (): Promise<string[]> => {
    const res = await server.admin('GET', '/api/collections/posts/records?perPage=500&sort=created');
    return res.body.items.map((r: { title: string }) => r.title);
  };

  before(async () => {
    app = appDir({ 'posts.ts': POSTS, 'lib/slug.ts': SLUG });
    server = await startServer({ env: { CAIRN_HOOKS_DIR: app.hooks, CAIRN_HOOK_TIMEOUT_MS: '700' } });
    const open = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };
    await createCollection(server, { name: 'audit', fields: [{ name: 'what', type: 'text' }] });
    await createCollection(server, {
      name: 'posts',
      ...open,
      fields: [
        { name: 'title', type: 'text' },
        { name: 'slug', type: 'text', required: true },
        { name: 'views', type: 'number' },
        { name: 'edits', type: 'number' },
        { name: 'locked', type: 'bool' },
        { name: 'secret', type: 'text' },
      ],
    });
  });
  after(async () => {
    await server?.close();
    app?.remove();
  });

  test('a create hook fills a required field before next() and sees the stored record after it', async () => {
    const res = await server.request('POST', '/api/collections/posts/records', { body: { title: 'Hello World', secret: 's3cret' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.slug, 'hello-world');
    // The answer went through the enrich hook, as the caller (a guest).
    assert.equal(res.body.yaml, 't: Hello World');
    assert.equal(res.body.viewer, 'guest');
    assert.equal(res.body.secret, undefined);
    const stored = await server.admin('GET', `/api/collections/posts/records/${res.body.id}`);
    assert.equal(stored.body.secret, 's3cret', 'enrich changes answers, not what is stored');
    assert.match(stored.body.viewer, /^_superusers:\w+$/, 'an administrator is a receiver too');
    assert.deepEqual((await audit()).slice(-2), ['before Hello World', 'created Hello World']);
  });

  test('a handler that returns without next() cancels the write: 400, nothing written', async () => {
    const before = await audit();
    const res = await server.request('POST', '/api/collections/posts/records', { body: { title: 'cancel' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'The request was cancelled by a hook.');
    assert.ok(!(await titles()).includes('cancel'));
    assert.deepEqual(await audit(), before);
  });

  test('an error thrown after next() rolls back the record and what the hook wrote', async () => {
    const before = await audit();
    const refused = await server.request('POST', '/api/collections/posts/records', { body: { title: 'refuse after' } });
    assert.equal(refused.status, 400);
    assert.deepEqual(refused.body, { status: 400, code: 400, message: 'Refused after the write.', data: { title: { code: 'validation_refused', message: 'No.' } } });

    const crashed = await server.request('POST', '/api/collections/posts/records', { body: { title: 'crash after' } });
    assert.equal(crashed.status, 500);
    assert.deepEqual(crashed.body, { status: 500, code: 500, message: 'Something went wrong while processing your request.', data: {} });
    assert.ok(!crashed.text.includes('internal detail'), 'nothing of the error in the answer');

    const titlesNow = await titles();
    assert.ok(!titlesNow.includes('refuse after') && !titlesNow.includes('crash after'));
    assert.deepEqual(await audit(), before, 'the audit rows the hook wrote rolled back with the record');
  });

  test('a hook past CAIRN_HOOK_TIMEOUT_MS fails its write with 503 and rolls it back', async () => {
    const before = await audit();
    delete (globalThis as Record<string, unknown>).slowHookEnded;
    const res = await server.request('POST', '/api/collections/posts/records', { body: { title: 'slow' } });
    assert.equal(res.status, 503);
    assert.equal(res.body.code, 503);
    // The handler goes on after the timeout and tries to write through the ended transaction: that
    // fails, and nothing of it reaches the database.
    await waitFor(() => (globalThis as Record<string, unknown>).slowHookEnded === true, { what: 'the timed-out hook to end' });
    assert.ok(!(await titles()).includes('slow'));
    assert.deepEqual(await audit(), before);
    const next = await server.request('POST', '/api/collections/posts/records', { body: { title: 'After Slow' } });
    assert.equal(next.status, 200, 'the server goes on serving writes');
  });

  test('an update hook sees the original and may change values, which are validated', async () => {
    const created = await server.request('POST', '/api/collections/posts/records', { body: { title: 'Edit me' } });
    const first = await server.request('PATCH', `/api/collections/posts/records/${created.body.id}`, { body: { views: 3 } });
    assert.equal(first.status, 200, first.text);
    assert.equal(first.body.edits, 1);
    assert.equal(first.body.views, 3);
    const second = await server.request('PATCH', `/api/collections/posts/records/${created.body.id}`, { body: { views: 4 } });
    assert.equal(second.body.edits, 2);

    const bad = await server.request('PATCH', `/api/collections/posts/records/${created.body.id}`, { body: { title: 'bad views' } });
    assert.equal(bad.status, 400);
    assert.equal(bad.body.data.views.code, 'validation_invalid_number');
    const after = await server.admin('GET', `/api/collections/posts/records/${created.body.id}`);
    assert.equal(after.body.title, 'Edit me');
    assert.equal(after.body.edits, 2);
  });

  test('a delete hook refuses with its own error; the record stays', async () => {
    const created = await server.request('POST', '/api/collections/posts/records', { body: { title: 'Locked', locked: true } });
    const res = await server.request('DELETE', `/api/collections/posts/records/${created.body.id}`);
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'Locked posts cannot be deleted.');
    assert.equal((await server.admin('GET', `/api/collections/posts/records/${created.body.id}`)).status, 200);
    const open = await server.request('POST', '/api/collections/posts/records', { body: { title: 'Free' } });
    assert.equal((await server.request('DELETE', `/api/collections/posts/records/${open.body.id}`)).status, 204);
  });

  test('each request of a batch runs the hooks inside the batch transaction', async () => {
    const before = await audit();
    const failed = await server.request('POST', '/api/batch', {
      body: {
        requests: [
          { method: 'POST', url: '/api/collections/posts/records', body: { title: 'Batch One' } },
          { method: 'POST', url: '/api/collections/posts/records', body: { title: 'refuse after' } },
        ],
      },
    });
    assert.equal(failed.status, 400);
    assert.equal(failed.body.data.requests['1'].response.message, 'Refused after the write.');
    assert.ok(!(await titles()).includes('Batch One'));
    assert.deepEqual(await audit(), before, 'no after-success handler ran for a rolled-back batch');

    const ok = await server.request('POST', '/api/batch', {
      body: {
        requests: [
          { method: 'POST', url: '/api/collections/posts/records', body: { title: 'Batch Two' } },
          { method: 'POST', url: '/api/collections/posts/records', body: { title: 'Batch Three' } },
        ],
      },
    });
    assert.equal(ok.status, 200, ok.text);
    assert.deepEqual(ok.body.map((r: { body: { slug: string; viewer: string } }) => [r.body.slug, r.body.viewer]), [
      ['batch-two', 'guest'],
      ['batch-three', 'guest'],
    ]);
    assert.deepEqual((await audit()).slice(before.length), ['before Batch Two', 'before Batch Three', 'created Batch Two', 'created Batch Three']);
  });

  test('an after-success handler that fails is logged and changes no answer', async () => {
    const res = await server.request('POST', '/api/collections/posts/records', { body: { title: 'after fails' } });
    assert.equal(res.status, 200);
    assert.ok((await titles()).includes('after fails'));
    assert.ok((await audit()).includes('created after fails'), 'its write before the throw stands: it ran after commit');
  });

  test('lists and expanded relations pass through enrich hooks, as the receiver', async () => {
    await createCollection(server, {
      name: 'comments',
      listRule: '',
      viewRule: '',
      fields: [
        { name: 'text', type: 'text' },
        { name: 'post', type: 'relation', options: { toCollection: 'posts', maxSelect: 1 } },
      ],
    });
    const post = await server.request('POST', '/api/collections/posts/records', { body: { title: 'Commented', secret: 'x' } });
    await server.admin('POST', '/api/collections/comments/records', { body: { text: 'hi', post: post.body.id } });
    const user = await createUser(server, 'reader@example.com');
    const list = await server.request('GET', '/api/collections/comments/records?expand=post', { token: user.token });
    assert.equal(list.status, 200);
    const expanded = list.body.items[0].expand.post;
    assert.equal(expanded.yaml, 't: Commented');
    assert.equal(expanded.viewer, `users:${user.id}`);
    assert.equal(expanded.secret, undefined);
    const posts = await server.request('GET', '/api/collections/posts/records?fields=title,viewer&perPage=1');
    assert.deepEqual(Object.keys(posts.body.items[0]).sort(), ['title', 'viewer'], 'fields picks from the enriched record');
  });

  test('realtime events pass through enrich hooks per receiver', async () => {
    const user = await createUser(server, 'listener@example.com');
    const guest = await SseStream.open(server.url);
    const member = await SseStream.open(server.url);
    try {
      assert.equal((await subscribeRaw(server.url, guest.clientId, ['posts'])).status, 204);
      assert.equal((await subscribeRaw(server.url, member.clientId, ['posts'], { token: user.token })).status, 204);
      await server.request('POST', '/api/collections/posts/records', { body: { title: 'Live', secret: 'x' } });
      const forGuest = await guest.next((e) => e.event === 'posts', 'the guest event');
      const forMember = await member.next((e) => e.event === 'posts', 'the member event');
      assert.equal(JSON.parse(forGuest.data).record.viewer, 'guest');
      assert.equal(JSON.parse(forMember.data).record.viewer, `users:${user.id}`);
      assert.equal(JSON.parse(forMember.data).record.secret, undefined);
    } finally {
      guest.close();
      member.close();
    }
  });

  test('auth flows run the record hooks: register, verification, and every sign-in', async () => {
    const reg = await server.request('POST', '/api/auth/register', { body: { email: 'hooked@example.com', password: 'password-123', passwordConfirm: 'password-123' } });
    assert.equal(reg.status, 200, reg.text);
    assert.equal(reg.body.name, 'Named by a hook');

    const login = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'hooked@example.com', password: 'password-123' } });
    assert.equal(login.status, 200);
    const refresh = await server.request('POST', '/api/collections/users/auth-refresh', { token: login.body.token });
    assert.equal(refresh.status, 200);
    const log = await audit();
    assert.ok(log.includes('password hooked@example.com token'), log.join(', '));
    assert.ok(log.includes('refresh hooked@example.com token'));

    // Verification is an update by Cairn itself: the update hooks see it.
    const user = await server.admin('GET', `/api/collections/users/records/${reg.body.id}`);
    assert.equal(user.body.verified, false);
    const verified = await server.admin('PATCH', `/api/collections/users/records/${reg.body.id}`, { body: { verified: true } });
    assert.equal(verified.status, 200);
    assert.ok((await audit()).includes('verified hooked@example.com'));

    // Superusers' sign-ins (PocketBase 0.23's _superusers) go through the same hook.
    const su = await server.request('POST', '/api/collections/_superusers/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(su.status, 200, su.text);
    assert.ok((await audit()).includes('superuser password _superusers'));

    await server.request('POST', '/api/auth/register', { body: { email: 'blocked@example.com', password: 'password-123', passwordConfirm: 'password-123' } });
    const refused = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'blocked@example.com', password: 'password-123' } });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.message, 'This account is blocked.');
    assert.equal(refused.body.token, undefined);
  });

  test('hooks see writes made by other hooks (audit rows are records too)', async () => {
    await waitFor(async () => (await audit()).length > 0, { what: 'audit rows' });
    const rows = await server.admin('GET', '/api/collections/audit/records?perPage=1');
    assert.equal(rows.status, 200);
    assert.ok(rows.body.totalItems > 0);
  });
});
