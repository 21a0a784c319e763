// through-tsx: a TypeScript hook it loads imports `cairn`, which must be this process's own src/index.ts (a bundle holds a copy)
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';
import { type AppDir, appDir } from './app-dir.ts';

// The email flows' requests reach the hooks before their mail leaves: TypeScript's
// onRecordAuthFlowRequest and pb_hooks' onRecordRequest…Request (v0.23) and
// onRecordBeforeRequest…Request (v0.22). A throw refuses the request; not going on sends nothing.
const TS_HOOKS = `
import { defineHooks } from 'cairn';
export default defineHooks((app) => {
  app.onRecordAuthFlowRequest(async (e) => {
    if (e.action === 'request-verification' && String(e.record.email).startsWith('ts-silent')) return;
    await e.next();
  }, 'users');
});
`;

const PB_NEW = `
onRecordRequestPasswordResetRequest((e) => {
  if (e.record.email().startsWith("locked")) throw new BadRequestError("Locked account in " + e.collection.name);
  if (e.record.email().startsWith("silent")) return;
  e.next();
}, "users");

onRecordRequestOTPRequest((e) => {
  if (e.record.email().startsWith("no-otp")) return;
  e.next();
}, "users");

onRecordRequestEmailChangeRequest((e) => {
  if (e.newEmail.endsWith("@blocked.example.com")) throw new BadRequestError("Not allowed: " + e.newEmail);
  e.next();
}, "users");
`;

const PB_OLD = `
onRecordBeforeRequestVerificationRequest((e) => {
  if (e.record.email().startsWith("old-refused")) throw new BadRequestError("No verification for " + e.record.email());
});
`;

describe('hooks: email flow requests (onRecordAuthFlowRequest, onRecordRequest…Request)', () => {
  let app: AppDir;
  let inbox: Inbox;
  let server: TestServer;

  before(async () => {
    inbox = await startInbox();
    app = appDir({ 'flows.ts': TS_HOOKS });
    const pbDir = path.join(app.root, 'pb_hooks');
    mkdirSync(pbDir, { recursive: true });
    writeFileSync(path.join(pbDir, 'new.pb.js'), PB_NEW);
    writeFileSync(path.join(pbDir, 'old.pb.js'), PB_OLD);
    server = await startServer({ env: { CAIRN_HOOKS_DIR: app.hooks, CAIRN_PB_HOOKS_DIR: pbDir, CAIRN_SMTP_URL: inbox.url } });
  });
  after(async () => {
    await server?.close();
    await inbox?.close();
    app?.remove();
  });

  /** Mails to `to` so far, once a marker mail sent after them has arrived (mail leaves in order). */
  async function mailsTo(to: string): Promise<number> {
    const marker = `marker-${Math.random().toString(36).slice(2)}@example.com`;
    await createUser(server, marker);
    const res = await server.request('POST', '/api/collections/users/request-verification', { body: { email: marker } });
    assert.equal(res.status, 204, res.text);
    await inbox.next(marker);
    return inbox.messages.filter((m) => m.to.includes(to)).length;
  }

  test('password reset: a handler refuses with its error, skips the mail, or lets it go', async () => {
    await createUser(server, 'locked@example.com');
    await createUser(server, 'silent@example.com');
    await createUser(server, 'fine@example.com');
    const locked = await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: 'locked@example.com' } });
    assert.equal(locked.status, 400, locked.text);
    assert.equal(locked.body.message, 'Locked account in users');
    const silent = await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: 'silent@example.com' } });
    assert.equal(silent.status, 204, silent.text);
    const fine = await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: 'fine@example.com' } });
    assert.equal(fine.status, 204, fine.text);
    await inbox.next('fine@example.com');
    assert.equal(await mailsTo('silent@example.com'), 0);
    assert.equal(await mailsTo('locked@example.com'), 0);
  });

  test('an unknown address answers 204 and reaches no handler', async () => {
    const res = await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: 'locked-nobody@example.com' } });
    assert.equal(res.status, 204, res.text);
  });

  test('email change: the handler sees the new address', async () => {
    const user = await createUser(server, 'mover@example.com');
    const blocked = await server.request('POST', '/api/collections/users/request-email-change', { body: { newEmail: 'me@blocked.example.com' }, token: user.token });
    assert.equal(blocked.status, 400, blocked.text);
    assert.equal(blocked.body.message, 'Not allowed: me@blocked.example.com');
    const ok = await server.request('POST', '/api/collections/users/request-email-change', { body: { newEmail: 'moved@example.com' }, token: user.token });
    assert.equal(ok.status, 204, ok.text);
    await inbox.next('moved@example.com');
  });

  test('OTP: a handler that does not go on gets the same answer, and no code is sent', async () => {
    await createUser(server, 'no-otp@example.com');
    await createUser(server, 'otp-ok@example.com');
    const enabled = await server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true } } });
    assert.equal(enabled.status, 200, enabled.text);
    const held = await server.request('POST', '/api/collections/users/request-otp', { body: { email: 'no-otp@example.com' } });
    assert.equal(held.status, 200, held.text);
    assert.equal(typeof held.body.otpId, 'string');
    const sent = await server.request('POST', '/api/collections/users/request-otp', { body: { email: 'otp-ok@example.com' } });
    assert.equal(sent.status, 200, sent.text);
    await inbox.next('otp-ok@example.com');
    assert.equal(await mailsTo('no-otp@example.com'), 0);
    const tried = await server.request('POST', '/api/collections/users/auth-with-otp', { body: { otpId: held.body.otpId, password: '12345678' } });
    assert.equal(tried.status, 400, tried.text);
  });

  test('verification: a v0.22 handler refuses; a TypeScript handler that does not go on sends nothing', async () => {
    await createUser(server, 'old-refused@example.com');
    const refused = await server.request('POST', '/api/collections/users/request-verification', { body: { email: 'old-refused@example.com' } });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.message, 'No verification for old-refused@example.com');
    await createUser(server, 'ts-silent@example.com');
    const silent = await server.request('POST', '/api/collections/users/request-verification', { body: { email: 'ts-silent@example.com' } });
    assert.equal(silent.status, 204, silent.text);
    assert.equal(await mailsTo('ts-silent@example.com'), 0);
  });
});
