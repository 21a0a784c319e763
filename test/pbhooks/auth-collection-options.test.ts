import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { databaseOf } from '../helpers/inspect.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// A hook that reads and changes the default users' auth options one key at a time, as a
// PocketBase app does with the collection `$app` finds.
const HOOKS = `
routerAdd("GET", "/users-options", (e) => {
  const users = $app.findCollectionByNameOrId("users");
  return e.json(200, {
    resetSubject: users.resetPasswordTemplate.subject,
    verificationBody: typeof users.verificationTemplate.body,
    otpTemplate: typeof users.otp.emailTemplate.subject,
    otpLength: users.otp.length,
    identityFields: users.passwordAuth.identityFields,
    mfaDuration: users.mfa.duration,
  });
});

routerAdd("POST", "/users-options", (e) => {
  const users = $app.findCollectionByNameOrId("users");
  users.resetPasswordTemplate.subject = "Forgot your {APP_NAME} password?";
  users.otp.length = 5;
  $app.save(users);
  // Saved again as it is: nothing more changes.
  $app.save(users);
  return e.json(200, { saved: true });
});
`;

describe('pb_hooks: a found auth collection has its templates and options', () => {
  let pb: ReturnType<typeof pbDir>;
  let server: TestServer;
  before(async () => {
    pb = pbDir({ 'users.pb.js': HOOKS });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  test('read: every template (Cairn\'s default where the collection has none) and option object', async () => {
    const res = await server.request('GET', '/users-options');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, {
      resetSubject: 'Reset your {APP_NAME} password',
      verificationBody: 'string',
      otpTemplate: 'string',
      otpLength: 8,
      identityFields: ['email'],
      mfaDuration: 1800,
    });
  });

  test('one key set and saved: that key changes, the rest of the collection as it was', async () => {
    const res = await server.request('POST', '/users-options');
    assert.equal(res.status, 200, res.text);
    const users = (await server.services.collections.all(await databaseOf(server))).find('users')!;
    const o = users.options as Record<string, any>;
    assert.equal(o.resetPasswordTemplate.subject, 'Forgot your {APP_NAME} password?');
    assert.match(o.resetPasswordTemplate.body, /confirm-password-reset\/\{TOKEN\}/);
    assert.equal(o.verificationTemplate, undefined);
    assert.equal(o.otp.length, 5);
    assert.equal(o.otp.duration, 180);
    assert.equal(o.otp.emailTemplate, undefined);
    assert.equal(o.authToken?.duration ?? 0, 0);
    assert.deepEqual(users.fields.map((f) => f.name), ['name', 'avatar', 'role']);
  });
});
