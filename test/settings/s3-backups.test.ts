import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { planSettings } from '../../src/import/settings.ts';
import { form } from '../helpers/files.ts';
import { startNodes, type TestNodes } from '../helpers/nodes.ts';
import { skipOn } from '../helpers/postgres.ts';
import { type S3Server, startS3 } from '../helpers/s3.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const OPEN_RULES = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };

/** PocketBase's S3Config for a bucket of the test's S3 server. */
function s3Settings(s3: S3Server, bucket: string, enabled = true) {
  return { enabled, bucket, region: 'us-east-1', endpoint: s3.endpoint, accessKey: 'S3RVER', secret: 'S3RVER', forcePathStyle: true };
}

async function upload(server: TestServer, name: string): Promise<{ id: string; file: string }> {
  const res = await server.request('POST', '/api/collections/docs/records', { raw: form([['file', { name, data: `content of ${name}` }]]) });
  assert.equal(res.status, 200, res.text);
  return { id: res.body.id, file: res.body.file };
}

async function save(server: TestServer, body: Record<string, unknown>): Promise<void> {
  const res = await server.admin('PATCH', '/api/settings', { body });
  assert.equal(res.status, 200, res.text);
}

let s3: S3Server;
before(async () => {
  s3 = await startS3();
});
after(() => s3.close());

describe('the s3 settings switch file storage when saved', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'docs', fields: [{ name: 'file', type: 'file', options: { maxSelect: 1, maxSize: 1024 * 1024 } }], ...OPEN_RULES });
  });
  after(() => server.close());

  test('enabled: the next upload is an object in the saved bucket; disabled: the local directory again', async () => {
    const local = await upload(server, 'before.txt');
    assert.ok(existsSync(path.join(server.dir, 'storage', 'main', 'docs', local.id, local.file)));

    const { name: bucket } = await s3.bucket();
    await save(server, { s3: s3Settings(s3, bucket) });
    const remote = await upload(server, 'remote.txt');
    assert.deepEqual(await s3.keys(bucket), [`main/docs/${remote.id}/${remote.file}`]);
    assert.equal(existsSync(path.join(server.dir, 'storage', 'main', 'docs', remote.id)), false);
    assert.equal((await server.request('GET', `/api/files/docs/${remote.id}/${remote.file}`)).text, 'content of remote.txt');
    // Deleting the record removes its object.
    assert.equal((await server.request('DELETE', `/api/collections/docs/records/${remote.id}`)).status, 204);
    await waitFor(async () => (await s3.keys(bucket)).length === 0, { what: 'the deleted record’s object to go' });
    // The S3 check of `storage` tries the saved bucket.
    assert.equal((await server.admin('POST', '/api/settings/test/s3', { body: { filesystem: 'storage' } })).status, 204);

    await save(server, { s3: { enabled: false } });
    const back = await upload(server, 'back.txt');
    assert.ok(existsSync(path.join(server.dir, 'storage', 'main', 'docs', back.id, back.file)));
    assert.deepEqual(await s3.keys(bucket), []);
    assert.equal((await server.request('GET', `/api/files/docs/${local.id}/${local.file}`)).text, 'content of before.txt');
  });
});

describe('the saved s3 settings win over CAIRN_STORAGE=s3', () => {
  test('s3 saved as disabled puts the next upload on the local disk; saved with another bucket, there', async () => {
    const env = await s3.bucket();
    const server = await startServer({ env: env.env });
    try {
      await createCollection(server, { name: 'docs', fields: [{ name: 'file', type: 'file', options: { maxSelect: 1, maxSize: 1024 * 1024 } }], ...OPEN_RULES });
      const first = await upload(server, 'env.txt');
      assert.deepEqual(await s3.keys(env.name), [`main/docs/${first.id}/${first.file}`]);
      await save(server, { s3: { enabled: false } });
      const local = await upload(server, 'local.txt');
      assert.ok(existsSync(path.join(server.dir, 'storage', 'main', 'docs', local.id, local.file)));
      const other = await s3.bucket();
      await save(server, { s3: s3Settings(s3, other.name) });
      const moved = await upload(server, 'other.txt');
      assert.deepEqual(await s3.keys(other.name), [`main/docs/${moved.id}/${moved.file}`]);
      assert.equal((await s3.keys(env.name)).length, 1);
    } finally {
      await server.close();
    }
  });
});

describe('the backups settings act when saved', { skip: skipOn('postgres', 'backups of a PostgreSQL instance are pg_dump’s') }, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  const autoJob = async () => (await server.admin('GET', '/api/crons')).body.find((j: { id: string }) => j.id === '__pbAutoBackup__');
  const localBackups = () => (existsSync(path.join(server.dir, 'backups')) ? readdirSync(path.join(server.dir, 'backups')).filter((f) => f.endsWith('.zip')) : []);

  test('backups.cron schedules __pbAutoBackup__, cronMaxKeep prunes, an empty cron stops it', async () => {
    assert.equal(await autoJob(), undefined);
    await save(server, { backups: { cron: '@every 1s', cronMaxKeep: 2 } });
    assert.deepEqual(await autoJob(), { id: '__pbAutoBackup__', expression: '@every 1s' });
    const autos = () => localBackups().filter((f) => f.startsWith('auto_')).sort();
    const first = await waitFor(() => autos().length >= 2 && autos()[0], { what: 'two scheduled backups', timeoutMs: 20_000 });
    // Pruned to the newest two as more are taken: the first one goes.
    await waitFor(() => !autos().includes(first), { what: 'the oldest scheduled backup to be pruned', timeoutMs: 20_000 });
    await save(server, { backups: { cron: '' } });
    assert.equal(await autoJob(), undefined);
    // A run under way when the cron was emptied still finishes (and prunes); then nothing more comes.
    await waitFor(() => server.services.backups.idle, { what: 'the last scheduled backup to end' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const settled = autos();
    assert.ok(settled.length <= 2, settled.join(', '));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert.deepEqual(autos(), settled);
  });

  test('backups.s3 keeps backups in its bucket: create, list, download, restore, delete', async () => {
    const { name: bucket } = await s3.bucket();
    await save(server, { backups: { s3: s3Settings(s3, bucket) } });
    const before = localBackups();
    const made = await server.admin('POST', '/api/backups', { body: { name: 'in-bucket.zip' } });
    assert.equal(made.status, 204, made.text);
    assert.deepEqual(await s3.keys(bucket), ['in-bucket.zip']);
    assert.deepEqual(localBackups(), before);
    const list = await server.admin('GET', '/api/backups');
    assert.deepEqual(
      list.body.map((b: { key: string }) => b.key),
      ['in-bucket.zip'],
    );
    assert.ok(list.body[0].size > 0);
    const token = (await server.admin('POST', '/api/files/token')).body.token;
    const download = await fetch(`${server.url}/api/backups/in-bucket.zip?token=${token}`);
    assert.equal(download.status, 200);
    assert.deepEqual(Buffer.from(await download.arrayBuffer()), await s3.object(bucket, 'in-bucket.zip'));
    const uploaded = new FormData();
    uploaded.append('file', new Blob([new Uint8Array(await s3.object(bucket, 'in-bucket.zip'))]), 'uploaded.zip');
    assert.equal((await server.admin('POST', '/api/backups/upload', { raw: uploaded })).status, 204);
    assert.deepEqual(await s3.keys(bucket), ['in-bucket.zip', 'uploaded.zip']);
    // A restore reads the archive from the bucket.
    await createCollection(server, { name: 'after_backup', fields: [{ name: 'title', type: 'text' }] });
    const restored = await server.admin('POST', '/api/backups/in-bucket.zip/restore');
    assert.equal(restored.status, 204, restored.text);
    await waitFor(async () => (await server.admin('GET', '/api/collections/after_backup')).status === 404, { what: 'the restored data without the later collection' });
    assert.equal((await server.admin('DELETE', '/api/backups/uploaded.zip')).status, 204);
    assert.deepEqual(await s3.keys(bucket), ['in-bucket.zip']);
    assert.equal((await server.admin('DELETE', '/api/backups/uploaded.zip')).status, 404);

    // Scheduled backups go to the bucket too, pruned there to cronMaxKeep.
    await save(server, { backups: { cron: '@every 1s', cronMaxKeep: 1 } });
    const autos = async () => (await s3.keys(bucket)).filter((k) => k.startsWith('auto_'));
    const first = await waitFor(async () => (await autos())[0], { what: 'a scheduled backup in the bucket', timeoutMs: 20_000 });
    await waitFor(async () => !(await autos()).includes(first), { what: 'the older scheduled backup to be pruned from the bucket', timeoutMs: 20_000 });
    await save(server, { backups: { cron: '' } });
    await waitFor(() => server.services.backups.idle, { what: 'the last scheduled backup to end' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.ok((await autos()).length <= 1);
    assert.ok((await s3.keys(bucket)).includes('in-bucket.zip'));
  });
});

describe('the s3 settings saved on one node act on the others', { skip: skipOn('sqlite', 'nodes share a PostgreSQL database') }, () => {
  let cluster: TestNodes;
  before(async () => {
    cluster = await startNodes(2);
    await createCollection(cluster.nodes[0], { name: 'docs', fields: [{ name: 'file', type: 'file', options: { maxSelect: 1, maxSize: 1024 * 1024 } }], ...OPEN_RULES });
  });
  after(() => cluster?.close());

  test('an upload on node 2 goes to the bucket saved on node 1, and node 1 serves it', async () => {
    const [one, two] = cluster.nodes;
    const { name: bucket } = await s3.bucket();
    await save(one, { s3: s3Settings(s3, bucket) });
    await waitFor(() => two.services.fileStorage.bucket()?.bucket === bucket, { what: 'node 2 to read the saved s3 settings' });
    const rec = await upload(two, 'shared.txt');
    assert.deepEqual(await s3.keys(bucket), [`main/docs/${rec.id}/${rec.file}`]);
    assert.equal((await one.request('GET', `/api/files/docs/${rec.id}/${rec.file}`)).text, 'content of shared.txt');
    await save(one, { s3: { enabled: false } });
    await waitFor(() => two.services.fileStorage.bucket() === undefined, { what: 'node 2 to go back to its local storage' });
    const local = await upload(two, 'local.txt');
    assert.ok(existsSync(path.join(two.dir, 'storage', 'main', 'docs', local.id, local.file)));
  });
});

describe('an import carries s3 and backups only as PocketBase had set them', () => {
  const pocketbase = (s3Enabled: boolean, cron: string) => ({
    s3: { enabled: s3Enabled, bucket: 'pb-files', region: 'eu-west-1', endpoint: 'https://s3.example.com', accessKey: 'k', secret: 's', forcePathStyle: false },
    backups: { cron, cronMaxKeep: 3, s3: { enabled: false, bucket: '', region: '', endpoint: '', accessKey: '', secret: '', forcePathStyle: false } },
    batch: { enabled: true, maxRequests: 50, timeout: 3, maxBodySize: 0 },
  });

  test("PocketBase's defaults (S3 off, no schedule) leave CAIRN_STORAGE and CAIRN_BACKUP_* deciding", () => {
    const plan = planSettings({ json: pocketbase(false, '') }, 'current', undefined);
    assert.deepEqual([...plan.sections.keys()], ['batch']);
  });

  test('S3 on and a schedule are carried, and act as when saved', () => {
    const plan = planSettings({ json: pocketbase(true, '0 0 * * *') }, 'current', undefined);
    assert.deepEqual([...plan.sections.keys()].sort(), ['backups', 'batch', 's3']);
    assert.match(plan.notes.map((n) => n.why).join('\n'), /new uploads go to PocketBase's S3 bucket/);
  });
});
