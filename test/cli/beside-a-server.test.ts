import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { migrationsDir } from '../helpers/pb-migrations.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Commands run beside a running server (the same data directory or database) change what it caches,
 * and the server takes the change without a restart, as PocketBase ≥ 0.38 does through
 * `pb_data/.notify`: on SQLite through the data directory's `.notify` folder, on PostgreSQL through
 * its notices.
 */
describe('a command run beside a running server', () => {
  let dir: string;
  let server: TestServer;
  let folder: ReturnType<typeof migrationsDir>;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-beside-'));
    server = await startServer({ dir });
    folder = migrationsDir({
      '1733400000_notes.js': `migrate((app) => {
  app.save(new Collection({ name: "notes", type: "base", listRule: "", fields: [{ name: "title", type: "text" }] }));
})
`,
    });
  });
  after(async () => {
    await server?.close();
    folder?.remove();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  test('`cairn superuser ips` shuts administrators out, and lets them back in, at once', async () => {
    assert.equal((await server.admin('GET', '/api/settings')).status, 200);
    const set = await runCli(['superuser', 'ips', '10.9.9.9', '--dir', dir]);
    assert.equal(set.code, 0, set.stderr);
    await waitFor(async () => (await server.admin('GET', '/api/settings')).status === 403, { what: 'the whitelist to reach the server' });
    const cleared = await runCli(['superuser', 'ips', '--dir', dir]);
    assert.equal(cleared.code, 0, cleared.stderr);
    await waitFor(async () => (await server.admin('GET', '/api/settings')).status === 200, { what: 'the cleared whitelist to reach the server' });
  });

  test('a collection `cairn migrate up` makes is served at once', async () => {
    assert.equal((await server.request('GET', '/api/collections/notes/records')).status, 404);
    const up = await runCli(['migrate', 'up', '--dir', dir, '--migrationsDir', folder.dir]);
    assert.equal(up.code, 0, up.stderr);
    await waitFor(async () => (await server.request('GET', '/api/collections/notes/records')).status === 200, { what: 'the new collection on the server' });
  });
});
