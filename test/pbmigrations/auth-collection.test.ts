import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Collection } from '../../src/collections/model.ts';
import { databaseOf } from '../helpers/inspect.ts';
import { migrationsDir } from '../helpers/pb-migrations.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * ≥ 0.23 pb_migrations files that change Cairn's default `users` as apps change PocketBase's: one
 * key of a mail template or of an auth option at a time, a template through `unmarshal`, and a
 * default field removed by PocketBase's id of it.
 */

const FILES = {
  // Found, the collection has every template and option object; the file sets single keys.
  '1720000001_users_mail.js': `/// <reference path="../pb_data/types.d.ts" />
migrate((app) => {
  const users = app.findCollectionByNameOrId("users");
  for (const key of ["verificationTemplate", "resetPasswordTemplate", "confirmEmailChangeTemplate"]) {
    if (typeof users[key].subject !== "string" || typeof users[key].body !== "string") throw new Error(key + " is not a template");
  }
  if (typeof users.otp.emailTemplate.body !== "string" || typeof users.authAlert.emailTemplate.subject !== "string") throw new Error("no otp or alert template");
  if (typeof users.mfa.duration !== "number" || typeof users.fileToken.duration !== "number" || !Array.isArray(users.oauth2.providers)) throw new Error("auth options missing");
  users.resetPasswordTemplate.body = "<p>Choose a new password: {APP_URL}/reset/{TOKEN}</p>";
  users.verificationTemplate.subject = "Welcome to {APP_NAME}, confirm your address";
  users.authAlert.emailTemplate.subject = "Someone signed in";
  users.otp.enabled = true;
  users.otp.length = 6;
  users.verificationToken.duration = 3600;
  app.save(users);
})
`,
  '1720000002_users_unmarshal.js': `/// <reference path="../pb_data/types.d.ts" />
migrate((app) => {
  const users = app.findCollectionByNameOrId("users");
  unmarshal({ confirmEmailChangeTemplate: { subject: "Your new {APP_NAME} address" } }, users);
  app.save(users);
})
`,
  // PocketBase's ids of the default fields.
  '1720000003_users_without_name.js': `/// <reference path="../pb_data/types.d.ts" />
migrate((app) => {
  const users = app.findCollectionByNameOrId("users");
  if (users.fields.getById("file376926767")?.name !== "avatar") throw new Error("avatar is not file376926767");
  if (users.fields.getById("text1579384326")?.name !== "name") throw new Error("name is not text1579384326");
  users.fields.removeById("text1579384326");
  app.save(users);
})
`,
};

describe('a ≥ 0.23 migration changing the default users', () => {
  let folder: ReturnType<typeof migrationsDir>;
  let server: TestServer;
  let users: Collection;
  before(async () => {
    folder = migrationsDir(FILES);
    server = await startServer({ env: { CAIRN_PB_MIGRATIONS_DIR: folder.dir } });
    users = (await server.services.collections.all(await databaseOf(server))).find('users')!;
  });
  after(async () => {
    await server?.close();
    folder?.remove();
  });

  test('all three files applied', async () => {
    const rows = await (await databaseOf(server)).all<{ file: string }>('SELECT file FROM _migrations ORDER BY file');
    assert.deepEqual(rows.map((r) => r.file), Object.keys(FILES));
  });

  test('a template key set alone is stored with the rest of that template; the untouched templates stay Cairn\'s', () => {
    const o = users.options as Record<string, any>;
    assert.equal(o.resetPasswordTemplate.body, '<p>Choose a new password: {APP_URL}/reset/{TOKEN}</p>');
    assert.equal(o.resetPasswordTemplate.subject, 'Reset your {APP_NAME} password');
    assert.equal(o.verificationTemplate.subject, 'Welcome to {APP_NAME}, confirm your address');
    assert.match(o.verificationTemplate.body, /\{TOKEN\}/);
    assert.equal(o.authAlert.emailTemplate.subject, 'Someone signed in');
    assert.equal(o.otp.emailTemplate, undefined);
  });

  test('unmarshal of one template key keeps the template\'s other key', () => {
    const o = users.options as Record<string, any>;
    assert.equal(o.confirmEmailChangeTemplate.subject, 'Your new {APP_NAME} address');
    assert.match(o.confirmEmailChangeTemplate.body, /confirm-email-change\/\{TOKEN\}/);
  });

  test('an option key set alone changes that key only', () => {
    const o = users.options as Record<string, any>;
    assert.equal(o.otp.enabled, true);
    assert.equal(o.otp.length, 6);
    assert.equal(o.otp.duration, 180);
    assert.equal(o.verificationToken.duration, 3600);
    assert.equal(o.passwordResetToken.duration, 1800);
    assert.deepEqual(o.passwordAuth, { enabled: true, identityFields: ['email'] });
  });

  test('`name` removed by PocketBase\'s id; the API lists the other default fields under theirs', async () => {
    assert.deepEqual(users.fields.map((f) => f.name), ['avatar', 'role']);
    const listed = await server.admin('GET', '/api/collections/users');
    assert.equal(listed.status, 200, listed.text);
    const ids = Object.fromEntries((listed.body.fields as Array<{ id: string; name: string }>).map((f) => [f.name, f.id]));
    assert.equal(ids.name, undefined);
    assert.equal(ids.avatar, 'file376926767');
    assert.equal(ids.email, 'email3885137012');
    // As PocketBase's save, an OAuth2 mapping to the removed field is emptied; the others stay.
    const mapped = (users.options as Record<string, any>).oauth2.mappedFields;
    assert.equal(mapped.name, '');
    assert.equal(mapped.avatarURL, 'avatar');
  });
});
