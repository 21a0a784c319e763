import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { importDeps } from '../../src/cli/import.ts';
import { importPocketBase } from '../../src/import/service.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { PB_TESTS } from './pb-fixtures.ts';

/**
 * An import carries PocketBase's settings by merging them over Cairn's: over what is stored when it
 * writes them, as a PATCH of the settings does, so a PATCH that commits while the import runs keeps
 * the keys PocketBase did not set.
 */
describe('cairn import pocketbase: settings changed while it runs', () => {
  let server: TestServer;
  let dir: string;
  before(async () => {
    server = await startServer();
    // PocketBase's test data, with a sender name PocketBase never set.
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-import-race-'));
    cpSync(PB_TESTS, dir, { recursive: true });
    const pb = new Database(path.join(dir, 'data.db'));
    const row = pb.prepare("SELECT value FROM _params WHERE id = 'settings'").get() as { value: string };
    const settings = JSON.parse(row.value);
    delete settings.meta.senderName;
    pb.prepare("UPDATE _params SET value = ? WHERE id = 'settings'").run(JSON.stringify(settings));
    pb.close();
  });
  after(async () => {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('a PATCH committed while the import copies files keeps its key; PocketBase\'s keys are carried over it', async () => {
    const deps = importDeps(server.services, server.dir);
    let patched: Promise<{ status: number; text: string }> | undefined;
    // The PATCH is sent, and answered, while the import stores its first file: after the import has
    // read PocketBase's settings and before it writes them.
    const storage = Object.create(deps.storage) as typeof deps.storage;
    storage.put = async (...args: Parameters<typeof deps.storage.put>) => {
      patched ??= server.admin('PATCH', '/api/settings', { body: { meta: { senderName: 'Patched meanwhile' } } });
      await patched;
      return deps.storage.put(...args);
    };
    await importPocketBase({ ...deps, storage }, { path: dir, database: 'main', dryRun: false });
    assert.ok(patched, 'the import copied no file');
    const reply = await patched;
    assert.equal(reply.status, 200, reply.text);
    const meta = (await server.admin('GET', '/api/settings')).body.meta;
    assert.equal(meta.senderName, 'Patched meanwhile');
    assert.equal(meta.appName, 'acme_test');
    assert.equal(meta.senderAddress, 'support@example.com');
  });
});
