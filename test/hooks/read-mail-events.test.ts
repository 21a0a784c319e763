// through-tsx: a TypeScript hook it loads imports `cairn`, which must be this process's own src/index.ts (a bundle holds a copy)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';
import { type AppDir, appDir } from './app-dir.ts';

// TypeScript hooks on the events pb_hooks brought: reads through the API, and mail before it leaves.
const HOOKS = `
import { defineHooks } from 'cairn';

export default defineHooks((app) => {
  app.onRecordsListRequest(async (e) => {
    e.result.items = e.result.items.filter((r) => r.title !== 'draft');
    e.result.totalItems = e.result.items.length;
    await e.next();
  }, 'posts');
  app.onRecordViewRequest(async (e) => {
    if (e.record.title === 'gone') return e.json(410, { gone: e.record.id });
    e.record.seen = e.auth ? 'member' : 'guest';
    await e.next();
  }, 'posts');
  app.onMailerRecordVerificationSend(async (e) => {
    e.message.subject = 'Please verify ' + e.record.email + ' (' + e.collection.name + ')';
    await e.next();
  }, 'users');
  app.onMailerSend(async (e) => {
    e.message.subject = '[TS] ' + e.message.subject;
    await e.next();
  });
});
`;

describe('TypeScript hooks: list/view request and mail events', () => {
  let app: AppDir;
  let inbox: Inbox;
  let server: TestServer;

  before(async () => {
    inbox = await startInbox();
    app = appDir({ 'h.ts': HOOKS });
    server = await startServer({ env: { CAIRN_HOOKS_DIR: app.hooks, CAIRN_SMTP_URL: inbox.url } });
    await createCollection(server, { name: 'posts', listRule: '', viewRule: '', fields: [{ name: 'title', type: 'text' }] });
  });
  after(async () => {
    await server?.close();
    await inbox?.close();
    app?.remove();
  });

  test('a list handler filters the answer; a view handler changes it or answers itself', async () => {
    for (const title of ['one', 'draft', 'gone']) await server.admin('POST', '/api/collections/posts/records', { body: { title } });
    const list = await server.request('GET', '/api/collections/posts/records?sort=title');
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.body.items.map((r: any) => r.title), ['gone', 'one']);
    assert.equal(list.body.totalItems, 2);
    const one = list.body.items.find((r: any) => r.title === 'one');
    const view = await server.request('GET', `/api/collections/posts/records/${one.id}`);
    assert.equal(view.body.seen, 'guest');
    const gone = list.body.items.find((r: any) => r.title === 'gone');
    const res = await server.request('GET', `/api/collections/posts/records/${gone.id}`);
    assert.equal(res.status, 410);
    assert.deepEqual(res.body, { gone: gone.id });
  });

  test('the verification mail passes its own event, then onMailerSend', async () => {
    await createUser(server, 'tess@example.com');
    const res = await server.request('POST', '/api/collections/users/request-verification', { body: { email: 'tess@example.com' } });
    assert.equal(res.status, 204, res.text);
    const mail = await inbox.next('tess@example.com', /verify/);
    assert.equal(mail.subject, '[TS] Please verify tess@example.com (users)');
  });
});
