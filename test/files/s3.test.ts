import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { startNodes, type TestNodes } from '../helpers/nodes.ts';
import { skipOn } from '../helpers/postgres.ts';
import { freePort } from '../helpers/process.ts';
import { s3Env, startS3, type S3Server } from '../helpers/s3.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';
import sharp from 'sharp';
import { form } from '../helpers/files.ts';

const PDF = '%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n';
const OPEN_RULES = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };

let s3: S3Server;
before(async () => {
  s3 = await startS3();
});
after(() => s3.close());

describe('files in an S3 bucket', () => {
  let server: TestServer;
  let bucket: string;

  before(async () => {
    const b = await s3.bucket();
    bucket = b.name;
    server = await startServer({ env: b.env });
    await createCollection(server, {
      name: 'posts',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'docs', type: 'file', options: { maxSelect: 3, maxSize: 1024 * 1024 } },
      ],
      ...OPEN_RULES,
    });
  });
  after(() => server.close());

  test('an upload becomes an object under the local layout’s key, and downloads from it', async () => {
    const data = randomBytes(200 * 1024);
    const res = await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'one'], ['docs', { name: 'blob.bin', data }], ['docs', { name: 'notes.txt', data: 'some notes' }]]) });
    assert.equal(res.status, 200, res.text);
    const [blob, notes] = res.body.docs;
    assert.deepEqual(await s3.keys(bucket), [`main/posts/${res.body.id}/${blob}`, `main/posts/${res.body.id}/${notes}`].sort());
    assert.deepEqual(await s3.object(bucket, `main/posts/${res.body.id}/${blob}`), data);
    // Nothing is kept in the data directory: the staged copies are gone too.
    assert.equal(existsSync(path.join(server.dir, 'storage', 'main')), false);
    assert.deepEqual(readdirSync(path.join(server.dir, 'storage', '.staging')), []);

    const whole = await fetch(`${server.url}/api/files/posts/${res.body.id}/${blob}`);
    assert.equal(whole.status, 200);
    assert.equal(whole.headers.get('content-length'), String(data.length));
    assert.equal(whole.headers.get('content-type'), 'application/octet-stream');
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), data);
    const text = await server.request('GET', `/api/files/posts/${res.body.id}/${notes}`);
    assert.equal(text.text, 'some notes');
    // The type decided at upload is the object's, not sniffed again.
    assert.equal(text.headers.get('content-type'), 'text/plain');
  });

  test('a thumbnail is an object beside its image, typed as the bucket keeps it, and leaves with it', async () => {
    const png = await sharp({ create: { width: 120, height: 60, channels: 3, background: { r: 10, g: 200, b: 30 } } }).png().toBuffer();
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'thumb'], ['docs', { name: 'green.png', data: png }]]) })).body;
    const [name] = rec.docs;
    const thumb = await fetch(`${server.url}/api/files/posts/${rec.id}/${name}?thumb=100x100`);
    assert.equal(thumb.status, 200);
    assert.equal(thumb.headers.get('content-type'), 'image/png');
    const meta = await sharp(Buffer.from(await thumb.arrayBuffer())).metadata();
    assert.deepEqual([meta.width, meta.height], [100, 100]);
    const prefix = `main/posts/${rec.id}/`;
    assert.deepEqual(await s3.keys(bucket, prefix), [prefix + name, `${prefix}thumbs_${name}/100x100_${name}`]);
    const replaced = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['docs', { name: 'other.txt', data: 'x' }]]) });
    assert.equal(replaced.status, 200, replaced.text);
    await waitFor(async () => (await s3.keys(bucket, prefix)).join() === prefix + replaced.body.docs[0], { what: 'the image and its thumbnail to leave the bucket' });
  });

  test('ranges, conditional requests and HEAD', async () => {
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'ranges'], ['docs', { name: 'abc.txt', data: '0123456789' }]]) })).body;
    const url = `/api/files/posts/${rec.id}/${rec.docs[0]}`;
    const part = await server.request('GET', url, { headers: { range: 'bytes=2-4' } });
    assert.equal(part.status, 206);
    assert.equal(part.text, '234');
    assert.equal(part.headers.get('content-range'), 'bytes 2-4/10');
    const open = await server.request('GET', url, { headers: { range: 'bytes=7-' } });
    assert.equal(open.text, '789');
    const tail = await server.request('GET', url, { headers: { range: 'bytes=-3' } });
    assert.equal(tail.text, '789');
    assert.equal((await server.request('GET', url, { headers: { range: 'bytes=50-60' } })).status, 416);
    const etag = part.headers.get('etag')!;
    assert.equal((await server.request('GET', url, { headers: { 'if-none-match': etag } })).status, 304);
    const head = await fetch(server.url + url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '10');
  });

  test('replaced files and deleted records leave the bucket', async () => {
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'edits'], ['docs', { name: 'a.txt', data: 'A' }], ['docs', { name: 'b.txt', data: 'B' }]]) })).body;
    const prefix = `main/posts/${rec.id}/`;
    const [a, b] = rec.docs;
    const replaced = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['docs', b], ['docs', { name: 'c.txt', data: 'C' }]]) });
    assert.equal(replaced.status, 200, replaced.text);
    const c = replaced.body.docs[1];
    await waitFor(async () => (await s3.keys(bucket, prefix)).join() === [prefix + b, prefix + c].sort().join(), { what: 'the replaced file to leave the bucket' });
    assert.equal((await server.request('GET', `/api/files/posts/${rec.id}/${a}`)).status, 404);

    assert.equal((await server.request('DELETE', `/api/collections/posts/records/${rec.id}`)).status, 204);
    await waitFor(async () => (await s3.keys(bucket, prefix)).length === 0, { what: 'the record’s objects to leave the bucket' });
    // Another record's objects stay.
    assert.ok((await s3.keys(bucket, 'main/posts/')).length > 0);
  });

  test('a refused write leaves no object behind', async () => {
    const before = await s3.keys(bucket);
    const tooMany = form([['title', 'many'], ...[1, 2, 3, 4].map((i): [string, { name: string; data: string }] => ['docs', { name: `${i}.txt`, data: String(i) }])]);
    assert.equal((await server.request('POST', '/api/collections/posts/records', { raw: tooMany })).status, 400);
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'kept'], ['docs', { name: 'keep.txt', data: 'kept' }]]) })).body;
    const afterCreate = await s3.keys(bucket);
    const bogus = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['docs', 'not_mine_1234567890.txt'], ['docs', { name: 'new.txt', data: 'new' }]]) });
    assert.equal(bogus.status, 400);
    const missing = await server.request('PATCH', '/api/collections/posts/records/aaaaaaaaaaaaaaa', { raw: form([['docs', { name: 'new.txt', data: 'new' }]]) });
    assert.equal(missing.status, 404);
    assert.deepEqual(await s3.keys(bucket), afterCreate);
    assert.equal(afterCreate.length, before.length + 1);
  });

  test('backups are refused with the reason: they hold the local storage directory', async () => {
    for (const [method, url] of [['GET', '/api/backups'], ['POST', '/api/backups']] as const) {
      const res = await server.admin(method, url, { body: method === 'POST' ? {} : undefined });
      assert.equal(res.status, 400, res.text);
      assert.match(res.body.message, /PostgreSQL|S3 bucket/);
    }
  });
});

describe('protected files in an S3 bucket', () => {
  let server: TestServer;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  let record: any;

  before(async () => {
    server = await startServer({ env: (await s3.bucket()).env });
    alice = await createUser(server, 'alice@example.com');
    bob = await createUser(server, 'bob@example.com');
    await createCollection(server, {
      name: 'contracts',
      fields: [
        { name: 'owner', type: 'relation', options: { toCollection: 'users' } },
        { name: 'signed', type: 'file', options: { protected: true } },
      ],
      viewRule: 'owner = @request.auth.id',
    });
    const fd = new FormData();
    fd.append('owner', alice.id);
    fd.append('signed', new Blob([PDF]), 'contract.pdf');
    const res = await server.admin('POST', '/api/collections/contracts/records', { raw: fd });
    assert.equal(res.status, 200, res.text);
    record = res.body;
  });
  after(() => server.close());

  test('need a file token whose owner passes the view rule', async () => {
    const url = `/api/files/contracts/${record.id}/${record.signed}`;
    // Not there for a caller who may not see it (PocketBase's 404).
    assert.equal((await server.request('GET', url)).status, 404);
    const tokenOf = async (auth: string) => (await server.request('POST', '/api/files/token', { token: auth })).body.token as string;
    const own = await server.request('GET', `${url}?token=${await tokenOf(alice.token)}`);
    assert.equal(own.status, 200);
    assert.equal(own.text, PDF);
    assert.equal(own.headers.get('content-type'), 'application/pdf');
    assert.equal(own.headers.get('cache-control'), 'private, no-store');
    assert.equal((await server.request('GET', `${url}?token=${await tokenOf(bob.token)}`)).status, 404);
  });
});

describe('an S3 endpoint out of reach', () => {
  let server: TestServer;

  before(async () => {
    // A loopback port nobody listens on: every request to the bucket is refused at once.
    server = await startServer({ env: s3Env(`http://127.0.0.1:${await freePort()}`, 'cairn-nowhere') });
    await createCollection(server, { name: 'posts', fields: [{ name: 'docs', type: 'file' }], ...OPEN_RULES });
  });
  after(() => server.close());

  test('is a 503 for the requests that need it; the server goes on', async () => {
    const res = await server.request('POST', '/api/collections/posts/records', { raw: form([['docs', { name: 'a.txt', data: 'A' }]]) });
    assert.equal(res.status, 503, res.text);
    assert.deepEqual(res.body, { status: 503, code: 503, message: 'The file storage is unavailable; try again shortly.', data: {} });
    // Nothing was written: the record does not exist.
    assert.equal((await server.request('GET', '/api/collections/posts/records')).body.totalItems, 0);
    // A record without files does not touch the bucket.
    const plain = await server.request('POST', '/api/collections/posts/records', { body: {} });
    assert.equal(plain.status, 200, plain.text);
    assert.equal((await server.request('GET', '/api/health')).status, 200);
  });

  test('a download of a file the record names is a 503 too', async () => {
    const rec = (await server.request('POST', '/api/collections/posts/records', { body: {} })).body;
    // A file name stored while the bucket was reachable.
    const name = 'kept_abcdefghij.txt';
    const db = await server.services.registry.get('main');
    await db.run('UPDATE posts SET docs = ? WHERE id = ?', [name, rec.id]);
    const res = await server.request('GET', `/api/files/posts/${rec.id}/${name}`);
    assert.equal(res.status, 503, res.text);
    assert.equal(res.body.message, 'The file storage is unavailable; try again shortly.');
  });
});

/**
 * A loopback proxy in front of the S3 server that, from `hold` to `release`, keeps every listing of
 * objects waiting: a bucket whose round trips take as long as the test wants.
 */
async function holdingProxy(target: string) {
  const held: Array<() => void> = [];
  const proxy = {
    holding: false,
    held,
    url: '',
    hold() {
      proxy.holding = true;
    },
    release() {
      proxy.holding = false;
      for (const go of held.splice(0)) go();
    },
    server: http.createServer((req, res) => {
      const forward = () => {
        const upstream = http.request(target + req.url, { method: req.method, headers: req.headers }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        });
        upstream.on('error', () => res.destroy());
        req.pipe(upstream);
      };
      if (proxy.holding && req.method === 'GET' && req.url?.includes('list-type=2')) held.push(forward);
      else forward();
    }),
  };
  await new Promise<void>((resolve) => proxy.server.listen(0, '127.0.0.1', resolve));
  proxy.url = `http://127.0.0.1:${(proxy.server.address() as AddressInfo).port}`;
  return proxy;
}

describe("a deleted record's objects in a slow bucket", () => {
  let proxy: Awaited<ReturnType<typeof holdingProxy>>;
  let bucket: string;

  before(async () => {
    proxy = await holdingProxy(s3.endpoint);
    bucket = (await s3.bucket()).name;
  });
  after(() => {
    proxy.release();
    proxy.server.closeAllConnections();
    proxy.server.close();
  });

  async function serverWithRecord() {
    const server = await startServer({ env: s3Env(proxy.url, bucket) });
    await createCollection(server, { name: 'posts', fields: [{ name: 'docs', type: 'file', options: { maxSelect: 2 } }], ...OPEN_RULES });
    const created = await server.request('POST', '/api/collections/posts/records', { raw: form([['docs', { name: 'a.txt', data: 'A' }]]) });
    assert.equal(created.status, 200, created.text);
    return { server, id: created.body.id as string, prefix: `main/posts/${created.body.id}/` };
  }

  test('the delete is answered while the bucket is still listing them, and they go after', async () => {
    const { server, id, prefix } = await serverWithRecord();
    try {
      proxy.hold();
      const deletion = server.request('DELETE', `/api/collections/posts/records/${id}`);
      const outcome = await Promise.race([deletion, new Promise<'waiting'>((resolve) => setTimeout(() => resolve('waiting'), 15_000).unref())]);
      if (outcome === 'waiting') assert.fail('the delete waited for the bucket');
      assert.equal(outcome.status, 204, outcome.text);
      await waitFor(() => proxy.held.length === 1, { what: 'the listing of the record’s objects' });
      // Answered, and the record's file still in the bucket: the removal had not happened yet.
      assert.equal((await s3.keys(bucket, prefix)).length, 1);
      assert.equal((await server.request('GET', `/api/collections/posts/records/${id}`)).status, 404);
      proxy.release();
      await waitFor(async () => (await s3.keys(bucket, prefix)).length === 0, { what: 'the record’s objects to leave the bucket' });
    } finally {
      proxy.release();
      await server.close();
    }
  });

  test('a server stopping with removals under way finishes them first', async () => {
    const { server, id, prefix } = await serverWithRecord();
    proxy.hold();
    assert.equal((await server.request('DELETE', `/api/collections/posts/records/${id}`)).status, 204);
    await waitFor(() => proxy.held.length === 1, { what: 'the listing of the record’s objects' });
    const closing = server.close();
    proxy.release();
    await closing;
    assert.deepEqual(await s3.keys(bucket, prefix), []);
  });
});

describe('S3 settings', () => {
  const base = { CAIRN_STORAGE: 's3', CAIRN_S3_BUCKET: 'files' };
  const error = (env: Record<string, string>) => {
    try {
      loadConfig({ dir: '/tmp/x' }, env);
    } catch (err) {
      return (err as Error).message;
    }
    return undefined;
  };

  test('are checked at start, each problem named in one line', () => {
    assert.equal(error({ CAIRN_STORAGE: 'ftp' }), 'CAIRN_STORAGE must be "local" or "s3", got "ftp".');
    assert.match(error({ CAIRN_STORAGE: 's3' })!, /^CAIRN_STORAGE=s3 needs CAIRN_S3_BUCKET/);
    assert.match(error({ ...base, CAIRN_S3_ACCESS_KEY: 'key' })!, /^CAIRN_S3_ACCESS_KEY and CAIRN_S3_SECRET go together/);
    assert.match(error({ ...base, CAIRN_S3_ENDPOINT: 'minio:9000' })!, /^CAIRN_S3_ENDPOINT must be an http\(s\) URL/);
    assert.match(error({ ...base, CAIRN_S3_FORCE_PATH_STYLE: 'maybe' })!, /^CAIRN_S3_FORCE_PATH_STYLE must be "on" or "off"/);
    assert.equal(error(base), undefined);
    const config = loadConfig({ dir: '/tmp/x' }, { ...base, CAIRN_S3_ENDPOINT: 'http://127.0.0.1:9000' });
    assert.deepEqual(config.s3, { endpoint: 'http://127.0.0.1:9000', bucket: 'files', region: 'us-east-1', accessKey: undefined, secret: undefined, forcePathStyle: false });
    assert.equal(loadConfig({ dir: '/tmp/x' }, {}).storage, 'local');
  });
});

describe('two nodes on one database and one bucket', { skip: skipOn('sqlite', 'two servers share data only through PostgreSQL') }, () => {
  let cluster: TestNodes;
  let bucket: string;

  before(async () => {
    const b = await s3.bucket();
    bucket = b.name;
    cluster = await startNodes(2, { env: b.env });
    await createCollection(cluster.nodes[0], { name: 'posts', fields: [{ name: 'docs', type: 'file', options: { maxSelect: 2 } }], ...OPEN_RULES });
  });
  after(() => cluster?.close());

  test('a file uploaded through one node downloads from the other, and a delete on either removes it', async () => {
    const [a, b] = cluster.nodes;
    const data = randomBytes(64 * 1024);
    const created = await a.request('POST', '/api/collections/posts/records', { raw: form([['docs', { name: 'shared.bin', data }]]) });
    assert.equal(created.status, 200, created.text);
    const url = `/api/files/posts/${created.body.id}/${created.body.docs[0]}`;
    const fromB = await fetch(b.url + url);
    assert.equal(fromB.status, 200);
    assert.deepEqual(Buffer.from(await fromB.arrayBuffer()), data);
    const range = await fetch(b.url + url, { headers: { range: 'bytes=100-109' } });
    assert.equal(range.status, 206);
    assert.deepEqual(Buffer.from(await range.arrayBuffer()), data.subarray(100, 110));

    assert.equal((await b.request('DELETE', `/api/collections/posts/records/${created.body.id}`)).status, 204);
    await waitFor(async () => (await s3.keys(bucket, `main/posts/${created.body.id}/`)).length === 0, { what: 'the objects to leave the bucket' });
    assert.equal((await a.request('GET', url)).status, 404);
  });
});
