import assert from 'node:assert/strict';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import Sqlite from 'better-sqlite3';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { freePort, runCli } from '../helpers/process.ts';
import { type S3Server, startS3 } from '../helpers/s3.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer } from '../helpers/server.ts';

/**
 * A PocketBase app with its S3 storage on keeps its uploads in the bucket, under the keys of its
 * `storage/` (`<collection id>/<record id>/<name>`). The import finds them there and copies them to
 * where Cairn reads them: the same bucket under Cairn's keys, since PocketBase's `s3` settings are
 * carried and Cairn's uploads go there from then on.
 */

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'current-flashcards');

interface StoredFile {
  collectionId: string;
  recordId: string;
  name: string;
  content: Buffer;
}

/** The fixture's files, from its storage/ folder. */
function fixtureFiles(): StoredFile[] {
  const root = path.join(FIXTURE, 'storage');
  return readdirSync(root).flatMap((collectionId) =>
    readdirSync(path.join(root, collectionId)).flatMap((recordId) =>
      readdirSync(path.join(root, collectionId, recordId)).map((name) => ({ collectionId, recordId, name, content: readFileSync(path.join(root, collectionId, recordId, name)) })),
    ),
  );
}

/** A copy of the fixture whose settings turn S3 on, at `endpoint`, with an empty storage/ folder. */
function pocketBaseOnS3(endpoint: string, bucket: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-pb-s3-'));
  cpSync(path.join(FIXTURE, 'data.db'), path.join(dir, 'data.db'));
  const db = new Sqlite(path.join(dir, 'data.db'));
  try {
    const s3 = { enabled: true, bucket, region: 'us-east-1', endpoint, accessKey: 'S3RVER', secret: 'S3RVER', forcePathStyle: true };
    db.prepare("INSERT INTO _params (id, value) VALUES ('settings', ?)").run(JSON.stringify({ meta: { appName: 'Flashcards' }, s3 }));
  } finally {
    db.close();
  }
  return dir;
}

async function importJson(pb: string, dir: string): Promise<{ collections: Array<{ name: string; files: number }>; notCarried: Array<{ what: string; why: string }>; settings: string[] }> {
  const res = await runCli(['import', 'pocketbase', pb, '--db', 'flash', '--dir', dir, '--json'], {}, 120_000);
  assert.equal(res.code, 0, res.stderr);
  return JSON.parse(res.stdout);
}

describe('cairn import pocketbase: files kept in PocketBase\'s S3 bucket', () => {
  let s3: S3Server;
  const dirs: string[] = [];
  const files = fixtureFiles();
  const cairnDir = async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-import-s3-'));
    dirs.push(dir);
    const res = await runCli(['admin', 'create', ADMIN_EMAIL, ADMIN_PASSWORD, '--dir', dir]);
    assert.equal(res.code, 0, res.stderr);
    return dir;
  };

  before(async () => {
    s3 = await startS3();
  });
  after(async () => {
    await s3?.close();
    for (const dir of dirs) {
      rmSync(dir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseFor(dir);
    }
  });

  test('are served by Cairn from the bucket, under its own keys; a file in neither place is reported', async () => {
    assert.ok(files.length >= 3, `the fixture has files: ${files.length}`);
    const bucket = await s3.bucket();
    const pb = pocketBaseOnS3(s3.endpoint, bucket.name);
    dirs.push(pb);
    // All but one in the bucket, as PocketBase stores them (a thumbnail beside one, as it makes them).
    const [gone, ...kept] = files;
    for (const f of kept) {
      await s3.client.send(new PutObjectCommand({ Bucket: bucket.name, Key: `${f.collectionId}/${f.recordId}/${f.name}`, Body: f.content }));
    }
    await s3.client.send(new PutObjectCommand({ Bucket: bucket.name, Key: `${kept[0].collectionId}/${kept[0].recordId}/thumbs_${kept[0].name}/100x100_${kept[0].name}`, Body: 'thumb' }));

    const dir = await cairnDir();
    const report = await importJson(pb, dir);
    assert.ok(report.settings.includes('s3'), `the s3 section is carried: ${report.settings}`);
    assert.equal(report.collections.reduce((n, c) => n + c.files, 0), kept.length);
    const missing = report.notCarried.filter((n) => /not in .*storage\/ nor in PocketBase's S3 bucket/.test(n.why));
    assert.equal(missing.length, 1, JSON.stringify(report.notCarried));
    assert.match(missing[0].why, /^1 file its records name/);

    const server = await startServer({ dir });
    try {
      const token = (await server.admin('POST', '/api/files/token', { db: 'flash' })).body.token;
      for (const f of kept) {
        const res = await fetch(`${server.url}/api/files/${names(f.collectionId)}/${f.recordId}/${f.name}?db=flash&token=${token}`);
        assert.equal(res.status, 200, `${f.collectionId}/${f.recordId}/${f.name}`);
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), f.content);
      }
      assert.equal((await fetch(`${server.url}/api/files/${names(gone.collectionId)}/${gone.recordId}/${gone.name}?db=flash&token=${token}`)).status, 404);
    } finally {
      await server.close();
    }
    // In the bucket under Cairn's keys, beside PocketBase's own (which stay).
    const cairnKeys = await s3.keys(bucket.name, 'flash/');
    assert.deepEqual(cairnKeys, kept.map((f) => `flash/${names(f.collectionId)}/${f.recordId}/${f.name}`).sort());
    assert.equal((await s3.keys(bucket.name, `${kept[0].collectionId}/`)).length > 0, true);
  });

  test('a bucket that cannot be reached is the report\'s note; the import goes on', async () => {
    const pb = pocketBaseOnS3(`http://127.0.0.1:${await freePort()}`, 'unreachable');
    dirs.push(pb);
    const report = await importJson(pb, await cairnDir());
    assert.ok(report.notCarried.some((n) => n.what === 'files' && /PocketBase's S3 bucket "unreachable" could not be listed/.test(n.why)), JSON.stringify(report.notCarried));
    assert.equal(report.collections.reduce((n, c) => n + c.files, 0), 0);
  });
});

/** The fixture's collection ids are PocketBase's `pbc_<name>`. */
function names(collectionId: string): string {
  return collectionId.replace(/^pbc_/, '');
}
