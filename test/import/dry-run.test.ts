import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli, spawnServer } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, request } from '../helpers/server.ts';
import { checksums, PB_APPS, PB_TESTS } from './pb-fixtures.ts';

/**
 * `--dry-run` reports exactly what the real run then does (the same report, down to each index and
 * view and each renamed name), and neither touches PocketBase's files: their checksums are the same
 * before and after, and no `-wal`/`-shm` appears beside them.
 */

async function importJson(dir: string, source: string, db: string, dryRun: boolean): Promise<Record<string, unknown>> {
  const res = await runCli(['import', 'pocketbase', source, '--db', db, '--dir', dir, '--json', ...(dryRun ? ['--dry-run'] : [])], {}, 120_000);
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout) as Record<string, unknown>;
}

describe('cairn import pocketbase --dry-run', () => {
  let dir: string;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-import-dry-'));
    const res = await runCli(['admin', 'create', ADMIN_EMAIL, ADMIN_PASSWORD, '--dir', dir]);
    assert.equal(res.code, 0, res.stderr);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  for (const [label, source, db] of [
    ["PocketBase's test data", PB_TESTS, 'pbtests'],
    ['the largest application', path.join(PB_APPS, 'pb-current-quotes.db'), 'quotes'],
  ] as const) {
    test(`${label}: the dry run's report is the real run's, and the source is left byte for byte`, async () => {
      const watched = source.endsWith('.db') ? path.dirname(source) : source;
      const sums = checksums(watched);
      const listing = readdirSync(watched).sort();
      const dry = await importJson(dir, source, db, true);
      assert.deepEqual(checksums(watched), sums, 'a dry run leaves the source as it was');
      const again = await importJson(dir, source, db, true);
      assert.deepEqual({ ...again, dryRun: undefined }, { ...dry, dryRun: undefined }, 'a dry run changed nothing a second one would see');
      const real = await importJson(dir, source, db, false);
      assert.deepEqual(checksums(watched), sums, 'the import leaves the source as it was');
      assert.deepEqual(readdirSync(watched).sort(), listing, 'no -wal or -shm beside the source');
      assert.equal(dry.dryRun, true);
      assert.equal(typeof real.ms, 'number');
      assert.deepEqual({ ...dry, dryRun: undefined, ms: undefined, recordsMs: undefined }, { ...real, dryRun: undefined, ms: undefined, recordsMs: undefined });
      assert.ok((real.collections as unknown[]).length > 0);
    });
  }

  test('a server running beside a dry run never serves the database it makes for the run', async () => {
    const server = await spawnServer(dir);
    try {
      const login = await request(server.url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      let done = false;
      const run = importJson(dir, PB_TESTS, 'besidedry', true).finally(() => (done = true));
      const statuses = new Set<number>();
      const lane = async () => {
        for (let i = 0; !done; i++) {
          const res = await request(server.url, 'POST', '/api/collections/users/records', { token: login.body.token, db: 'besidedry', body: { email: `lane${i}-${Math.random()}@example.com`, password: 'lane-password-1', passwordConfirm: 'lane-password-1' } });
          statuses.add(res.status);
        }
      };
      await Promise.all([run, lane(), lane()]);
      assert.deepEqual([...statuses], [404], 'no write answered for a database the dry run then removes');
      assert.equal((await request(server.url, 'GET', '/api/collections/users/records', { token: login.body.token, db: 'besidedry' })).status, 404);
    } finally {
      await server.kill();
    }
  });
});
