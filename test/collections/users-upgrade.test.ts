import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { databaseOf } from '../helpers/inspect.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * OAuth2 sign-ups fill what `oauth2.mappedFields` names. The default `users` of a database made before
 * its settings held them had its name and avatar filled all the same: on upgrade it maps them, and a
 * mapping an administrator emptied stays empty.
 */
test("the default users of an older database maps the profile's name and avatar after the upgrade", async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-users-upgrade-'));
  let server: TestServer | undefined;
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });
  // Made as before: `users` without oauth2 settings, the step not recorded.
  const asBefore = async (oauth2: Record<string, unknown> | undefined) => {
    const db = await databaseOf(server!);
    const row = await db.get<{ options: unknown }>("SELECT options FROM _collections WHERE name = 'users'");
    const options = (typeof row?.options === 'string' ? JSON.parse(row.options) : row?.options) as Record<string, unknown>;
    delete options.oauth2;
    if (oauth2) options.oauth2 = oauth2;
    await db.run("UPDATE _collections SET options = ? WHERE name = 'users'", [JSON.stringify(options)]);
    await db.run('DELETE FROM _cairn_schema WHERE id = ?', ['collections.users.oauth2-mapped-fields']);
    await server!.close();
    server = await startServer({ dir });
    return (await server.admin('GET', '/api/collections/users')).body.oauth2.mappedFields;
  };

  server = await startServer({ dir });
  assert.deepEqual(await asBefore(undefined), { id: '', name: 'name', username: '', avatarURL: 'avatar' });
  const emptied = { id: '', name: '', username: '', avatarURL: '' };
  assert.deepEqual(await asBefore({ enabled: true, mappedFields: emptied }), emptied);
});
