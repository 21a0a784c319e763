import assert from 'node:assert/strict';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LocalFileStorage } from '../../src/files/storage/local.ts';
import { FileStore } from '../../src/files/store.ts';
import type { RecordEvent } from '../../src/records/deps.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { filesUnder, form } from '../helpers/files.ts';
import { waitFor } from '../helpers/wait.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');
const PDF = Buffer.from('%PDF-1.4\n%âãÏÓ\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n', 'latin1');
const UPLOAD_LIMIT = 256 * 1024;
/** Collections open to everyone: these tests are about files, not rules (protected.test.ts is). */
const OPEN_RULES = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };

/** A GET with the path sent exactly as written (fetch would normalise `..` and encodings away). */
function rawGet(url: string, rawPath: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: rawPath, method: 'GET' }, (res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

/** A POST with a body written byte for byte (FormData would always be well-formed). */
function rawPost(url: string, rawPath: string, contentType: string, body: string): Promise<{ status: number; json: any }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: rawPath, method: 'POST', headers: { 'content-type': contentType } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('file fields', () => {
  let server: TestServer;
  let storage: string;
  let staging: string;

  before(async () => {
    server = await startServer({ env: { CAIRN_UPLOAD_LIMIT: String(UPLOAD_LIMIT) } });
    storage = path.join(server.dir, 'storage');
    staging = path.join(storage, '.staging');
    await createCollection(server, {
      name: 'posts',
      type: 'base',
      fields: [
        { name: 'title', type: 'text', options: { min: 2 } },
        { name: 'docs', type: 'file', options: { maxSelect: 3, maxSize: 4096 } },
        { name: 'cover', type: 'file', maxSelect: 1, mimeTypes: ['image/png', 'image/jpeg'], thumbs: ['100x100'] },
      ],
      ...OPEN_RULES,
    });
  });
  after(() => server.close());

  const recordDir = (id: string) => path.join(storage, 'main', 'posts', id);

  test('the file field keeps its PocketBase options', async () => {
    const res = await server.admin('GET', '/api/collections/posts');
    const docs = res.body.schema.find((f: any) => f.name === 'docs');
    const cover = res.body.schema.find((f: any) => f.name === 'cover');
    assert.deepEqual(docs.options, { maxSelect: 3, maxSize: 4096, mimeTypes: [], thumbs: [], protected: false });
    assert.deepEqual(cover.options, { maxSelect: 1, maxSize: 5 * 1024 * 1024, mimeTypes: ['image/png', 'image/jpeg'], thumbs: ['100x100'], protected: false });
  });

  test('invalid file options are a 400 per option', async () => {
    const res = await server.admin('POST', '/api/collections', {
      body: { name: 'bad_files', fields: [{ name: 'f', type: 'file', options: { maxSelect: 0, maxSize: -1, mimeTypes: ['png'], thumbs: ['big'] } }] },
    });
    assert.equal(res.status, 400);
    // Position 1: PocketBase counts the `id` field first under `fields`.
    assert.deepEqual(Object.keys(res.body.data.fields[1].options).sort(), ['maxSelect', 'maxSize', 'mimeTypes', 'thumbs']);
  });

  test('upload, list and download', async () => {
    const created = await server.request('POST', '/api/collections/posts/records', {
      raw: form([
        ['title', 'First post'],
        ['docs', { name: 'Meeting Notes.txt', data: 'hello world' }],
        ['docs', { name: '../../etc/report.pdf', data: PDF }],
        ['cover', { name: 'photo.PNG', data: PNG }],
      ]),
    });
    assert.equal(created.status, 200, created.text);
    const rec = created.body;
    assert.equal(rec.title, 'First post');
    assert.equal(rec.docs.length, 2);
    assert.match(rec.docs[0], /^meeting_notes_[a-z0-9]{10}\.txt$/);
    assert.match(rec.docs[1], /^report_[a-z0-9]{10}\.pdf$/);
    assert.match(rec.cover, /^photo_[a-z0-9]{10}\.png$/);
    assert.deepEqual(filesUnder(recordDir(rec.id)), [...rec.docs, rec.cover].sort());
    assert.deepEqual(filesUnder(staging), []);

    const listed = await server.request('GET', `/api/collections/posts/records?filter=${encodeURIComponent(`id="${rec.id}"`)}`);
    assert.deepEqual(listed.body.items[0].docs, rec.docs);
    assert.equal(listed.body.items[0].cover, rec.cover);

    const txt = await server.request('GET', `/api/files/posts/${rec.id}/${rec.docs[0]}`);
    assert.equal(txt.status, 200);
    assert.equal(txt.text, 'hello world');
    assert.equal(txt.headers.get('content-type'), 'text/plain');
    assert.equal(txt.headers.get('content-length'), '11');
    assert.equal(txt.headers.get('content-disposition'), `attachment; filename="${rec.docs[0]}"`);
    assert.match(txt.headers.get('cache-control')!, /max-age=\d+/);
    assert.ok(txt.headers.get('etag'));
    assert.ok(txt.headers.get('last-modified'));
    assert.equal(txt.headers.get('x-content-type-options'), 'nosniff');

    const pdf = await server.request('GET', `/api/files/posts/${rec.id}/${rec.docs[1]}`);
    assert.equal(pdf.headers.get('content-type'), 'application/pdf');
    assert.equal(pdf.headers.get('content-disposition'), `inline; filename="${rec.docs[1]}"`);

    const png = await fetch(`${server.url}/api/files/${rec.collectionId}/${rec.id}/${rec.cover}?download=1`);
    assert.equal(png.status, 200);
    assert.equal(png.headers.get('content-type'), 'image/png');
    assert.equal(png.headers.get('content-disposition'), `attachment; filename="${rec.cover}"`);
    assert.deepEqual(Buffer.from(await png.arrayBuffer()), PNG);
  });

  test('conditional and range requests', async () => {
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'ranges'], ['docs', { name: 'abc.txt', data: '0123456789' }]]) })).body;
    const url = `/api/files/posts/${rec.id}/${rec.docs[0]}`;
    const first = await server.request('GET', url);
    const etag = first.headers.get('etag')!;
    const again = await server.request('GET', url, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal(again.text, '');
    const part = await server.request('GET', url, { headers: { range: 'bytes=2-4' } });
    assert.equal(part.status, 206);
    assert.equal(part.text, '234');
    assert.equal(part.headers.get('content-range'), 'bytes 2-4/10');
    const tail = await server.request('GET', url, { headers: { range: 'bytes=-3' } });
    assert.equal(tail.text, '789');
    const beyond = await server.request('GET', url, { headers: { range: 'bytes=50-60' } });
    assert.equal(beyond.status, 416);
    const head = await fetch(server.url + url, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), '10');
  });

  test('field+ adds, field- removes by name, a plain value replaces; dropped files leave the disk after commit', async () => {
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'edits'], ['docs', { name: 'a.txt', data: 'A' }]]) })).body;
    const [a] = rec.docs;

    const added = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['docs+', { name: 'b.txt', data: 'B' }]]) });
    assert.equal(added.status, 200, added.text);
    assert.equal(added.body.docs.length, 2);
    assert.equal(added.body.docs[0], a);
    const b = added.body.docs[1];
    assert.deepEqual(filesUnder(recordDir(rec.id)), [a, b].sort());

    const removed = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { body: { 'docs-': [a] } });
    assert.equal(removed.status, 200, removed.text);
    assert.deepEqual(removed.body.docs, [b]);
    assert.deepEqual(filesUnder(recordDir(rec.id)), [b]);
    assert.equal((await server.request('GET', `/api/files/posts/${rec.id}/${a}`)).status, 404);

    // A plain key is the whole new value: the names listed are kept, the uploads added, the rest removed.
    const replaced = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['docs', { name: 'c.txt', data: 'C' }]]) });
    assert.equal(replaced.status, 200, replaced.text);
    assert.equal(replaced.body.docs.length, 1);
    const c = replaced.body.docs[0];
    assert.match(c, /^c[a-z0-9]+_[a-z0-9]{10}\.txt$/);
    assert.deepEqual(filesUnder(recordDir(rec.id)), [c]);

    const kept = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['docs', c], ['docs', { name: 'd.txt', data: 'D' }]]) });
    assert.equal(kept.status, 200, kept.text);
    assert.equal(kept.body.docs[0], c);
    assert.equal(kept.body.docs.length, 2);

    const cleared = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { body: { docs: [] } });
    assert.deepEqual(cleared.body.docs, []);
    assert.equal(existsSync(recordDir(rec.id)), false, 'the record folder goes with its last file');
  });

  test('a single file field replaces its file and sends the old one away', async () => {
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'covers'], ['cover', { name: 'one.png', data: PNG }]]) })).body;
    const next = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['cover', { name: 'two.png', data: PNG }]]) });
    assert.equal(next.status, 200, next.text);
    assert.match(next.body.cover, /^two_/);
    assert.deepEqual(filesUnder(recordDir(rec.id)), [next.body.cover]);
  });

  test('other fields come as form fields or as @jsonPayload', async () => {
    const fd = form([['title', 'ignored by the payload'], ['docs', { name: 'p.txt', data: 'payload' }]]);
    fd.append('@jsonPayload', JSON.stringify({ title: 'From payload' }));
    const res = await server.request('POST', '/api/collections/posts/records', { raw: fd });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.title, 'From payload');
    assert.equal(res.body.docs.length, 1);

    const broken = new FormData();
    broken.append('@jsonPayload', '{"title": ');
    const bad = await server.request('POST', '/api/collections/posts/records', { raw: broken });
    assert.equal(bad.status, 400);
  });

  test('deleting a record removes its files after the commit', async () => {
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'doomed'], ['docs', { name: 'x.txt', data: 'x' }]]) })).body;
    assert.equal(filesUnder(recordDir(rec.id)).length, 1);
    const res = await server.request('DELETE', `/api/collections/posts/records/${rec.id}`);
    assert.equal(res.status, 204);
    assert.equal(existsSync(recordDir(rec.id)), false);
    assert.equal((await server.request('GET', `/api/files/posts/${rec.id}/${rec.docs[0]}`)).status, 404);
  });

  test('a failed validation leaves no file behind', async () => {
    const before = filesUnder(storage);
    const res = await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'x'], ['docs', { name: 'keep.txt', data: 'never stored' }]]) });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.title.code, 'validation_min_text_constraint');
    assert.deepEqual(filesUnder(storage), before);

    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'valid'], ['docs', { name: 'keep.txt', data: 'kept' }]]) })).body;
    const bogus = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['docs', 'not_mine_1234567890.txt'], ['docs', { name: 'new.txt', data: 'new' }]]) });
    assert.equal(bogus.status, 400);
    assert.equal(bogus.body.data.docs.code, 'validation_invalid_file');
    assert.deepEqual(filesUnder(recordDir(rec.id)), rec.docs);
    assert.deepEqual(filesUnder(staging), []);
  });

  test('a change that rolls back after its files were stored keeps the old files and drops the new', async () => {
    const rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'rollback'], ['cover', { name: 'old.png', data: PNG }]]) })).body;
    // A later step of the same transaction fails (as a webhook outbox write could).
    const failing = async (_tx: unknown, event: RecordEvent) => {
      if (event.record.id === rec.id) throw new Error('boom');
    };
    const hooks = server.services.records.deps.changeHooks;
    hooks.push(failing);
    try {
      const res = await server.request('PATCH', `/api/collections/posts/records/${rec.id}`, { raw: form([['cover', { name: 'new.png', data: PNG }]]) });
      assert.equal(res.status, 500);
    } finally {
      hooks.splice(hooks.indexOf(failing), 1);
    }
    assert.deepEqual(filesUnder(recordDir(rec.id)), [rec.cover]);
    assert.equal((await server.request('GET', `/api/collections/posts/records/${rec.id}`)).body.cover, rec.cover);
    assert.deepEqual(filesUnder(staging), []);
  });

  test('a file over the field maxSize is a 400 for that field, and nothing is kept', async () => {
    const before = filesUnder(storage);
    const res = await server.request('POST', '/api/collections/posts/records', {
      raw: form([['title', 'big'], ['docs', { name: 'big.txt', data: 'x'.repeat(4097) }]]),
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.docs.code, 'validation_file_size_limit');
    assert.match(res.body.data.docs.message, /big\.txt.*4096/);
    assert.deepEqual(filesUnder(storage), before);
  });

  test('the type is checked on the content, not the name', async () => {
    const fake = await server.request('POST', '/api/collections/posts/records', {
      raw: form([['title', 'fake'], ['cover', { name: 'photo.png', data: '<script>alert(1)</script>' }]]),
    });
    assert.equal(fake.status, 400);
    assert.equal(fake.body.data.cover.code, 'validation_invalid_mime_type');
    const renamed = await server.request('POST', '/api/collections/posts/records', {
      raw: form([['title', 'renamed'], ['cover', { name: 'notes.txt', data: PNG }]]),
    });
    assert.equal(renamed.status, 200, renamed.text);
    assert.match(renamed.body.cover, /\.txt$/);
    const served = await server.request('GET', `/api/files/posts/${renamed.body.id}/${renamed.body.cover}`);
    assert.equal(served.headers.get('content-type'), 'image/png');
  });

  test('more files than maxSelect is a 400', async () => {
    const res = await server.request('POST', '/api/collections/posts/records', {
      raw: form([['title', 'many'], ...[1, 2, 3, 4].map((i): [string, { name: string; data: string }] => ['docs', { name: `${i}.txt`, data: String(i) }])]),
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.data.docs.code, 'validation_too_many_values');
    const two = await server.request('POST', '/api/collections/posts/records', {
      raw: form([['title', 'two covers'], ['cover', { name: 'a.png', data: PNG }], ['cover', { name: 'b.png', data: PNG }]]),
    });
    assert.equal(two.status, 400);
    assert.equal(two.body.data.cover.code, 'validation_too_many_values');
    assert.deepEqual(filesUnder(staging), []);
  });

  test('a request over the upload limit is a 413', async () => {
    const before = filesUnder(storage);
    const declared = await server.request('POST', '/api/collections/posts/records', {
      raw: form([['title', 'huge'], ['docs', { name: 'huge.bin', data: Buffer.alloc(UPLOAD_LIMIT + 1024) }]]),
    });
    assert.equal(declared.status, 413);
    assert.equal(declared.body.code, 413);

    // Streamed without a Content-Length: counted as it arrives.
    const fd = form([['title', 'chunked'], ['docs', { name: 'huge.bin', data: Buffer.alloc(UPLOAD_LIMIT + 1024) }]]);
    const encoded = new Response(fd);
    const res = await fetch(`${server.url}/api/collections/posts/records`, {
      method: 'POST',
      headers: { 'content-type': encoded.headers.get('content-type')! },
      body: encoded.body,
      duplex: 'half',
    } as RequestInit);
    assert.equal(res.status, 413);
    assert.equal((await res.json()).code, 413);
    // The answer can leave before the refused stream's staged part is removed (the upload is cut
    // off mid-body): nothing may stay, so wait for it with a deadline.
    await waitFor(() => JSON.stringify(filesUnder(storage)) === JSON.stringify(before), { what: 'the refused upload to leave nothing behind' });
  });

  test('files in a JSON body are a 415; file names in JSON are fine', async () => {
    const res = await server.request('POST', '/api/collections/posts/records', { body: { title: 'json', docs: [{ name: 'a.txt', data: 'aGVsbG8=' }] } });
    assert.equal(res.status, 415);
    assert.equal(res.body.code, 415);
    const names = await server.request('POST', '/api/collections/posts/records', { body: { title: 'json', docs: [] } });
    assert.equal(names.status, 200);
  });

  test('webhook payloads carry file names, never contents', async () => {
    const receiver = await startReceiver();
    try {
      await createCollection(server, {
        name: 'hooked',
        fields: [{ name: 'docs', type: 'file', options: { maxSelect: 2 } }],
        ...OPEN_RULES,
        options: { triggers: [{ action: 'create', url: `${receiver.url}/files`, method: 'POST' }, { action: 'update', url: `${receiver.url}/files`, method: 'POST' }] },
      });
      const secret = `top-secret-content-${'z'.repeat(100)}`;
      const rec = (await server.request('POST', '/api/collections/hooked/records', { raw: form([['docs', { name: 'secret.txt', data: secret }]]) })).body;
      const next = (await server.request('PATCH', `/api/collections/hooked/records/${rec.id}`, { raw: form([['docs+', { name: 'more.txt', data: secret }]]) })).body;
      const received = await receiver.waitForRequests(2);
      const created = received.find((r) => r.json.event === 'record.create')!;
      const updated = received.find((r) => r.json.event === 'record.update')!;
      assert.deepEqual(created.json.record.docs, rec.docs);
      assert.deepEqual(updated.json.record.docs, next.docs);
      assert.deepEqual(updated.json.oldRecord.docs, rec.docs);
      for (const req of [created, updated]) assert.doesNotMatch(req.body, /top-secret-content/);
    } finally {
      await receiver.close();
    }
  });

  test('malformed multipart bodies are 400s and leave nothing behind', async () => {
    const before = filesUnder(storage);
    const B = 'cairnBoundary';
    const type = `multipart/form-data; boundary=${B}`;
    const part = (headers: string, body: string) => `--${B}\r\n${headers}\r\n\r\n${body}\r\n`;
    const cases: Array<[string, string, string]> = [
      ['a body that ends inside a file', type, `--${B}\r\nContent-Disposition: form-data; name="docs"; filename="cut.txt"\r\n\r\nhalf a fi`],
      ['no boundary', 'multipart/form-data', part('Content-Disposition: form-data; name="title"', 'x')],
      ['a JSON part that is not JSON', type, part('Content-Disposition: form-data; name="title"\r\nContent-Type: application/json', '{nope') + `--${B}--\r\n`],
      ['a field named __proto__', type, part('Content-Disposition: form-data; name="__proto__"', '{}') + `--${B}--\r\n`],
      ['a @jsonPayload that is not an object', type, part('Content-Disposition: form-data; name="@jsonPayload"', '[1]') + `--${B}--\r\n`],
    ];
    for (const [what, contentType, body] of cases) {
      const res = await rawPost(server.url, '/api/collections/posts/records', contentType, body);
      assert.equal(res.status, 400, `${what}: ${JSON.stringify(res.json)}`);
      assert.equal(res.json.code, 400, what);
    }
    assert.deepEqual(filesUnder(storage), before);

    // A part declared as application/json keeps its type, like @jsonPayload values.
    const typed = await rawPost(server.url, '/api/collections/posts/records', type, part('Content-Disposition: form-data; name="title"\r\nContent-Type: application/json', '"typed title"') + `--${B}--\r\n`);
    assert.equal(typed.status, 200);
    assert.equal(typed.json.title, 'typed title');
  });

  describe('paths', () => {
    let rec: any;
    let other: any;
    before(async () => {
      rec = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'paths'], ['docs', { name: 'doc.txt', data: 'mine' }]]) })).body;
      other = (await server.request('POST', '/api/collections/posts/records', { raw: form([['title', 'other'], ['docs', { name: 'doc.txt', data: 'other' }]]) })).body;
      // A file on disk that no record field names is never served.
      mkdirSync(recordDir(rec.id), { recursive: true });
      writeFileSync(path.join(recordDir(rec.id), 'stray_file.txt'), 'stray');
    });

    test('only names of the record are served', async () => {
      assert.equal((await server.request('GET', `/api/files/posts/${rec.id}/${rec.docs[0]}`)).text, 'mine');
      assert.equal((await server.request('GET', `/api/files/posts/${rec.id}/${other.docs[0]}`)).status, 404);
      assert.equal((await server.request('GET', `/api/files/posts/${rec.id}/stray_file.txt`)).status, 404);
      assert.equal((await server.request('GET', `/api/files/nope/${rec.id}/${rec.docs[0]}`)).status, 404);
      assert.equal((await server.request('GET', `/api/files/posts/aaaaaaaaaaaaaaa/${rec.docs[0]}`)).status, 404);
    });

    test('traversal in every segment is a 404, raw or encoded', async () => {
      const name = rec.docs[0];
      const attempts = [
        `/api/files/../../system.db`,
        `/api/files/..%2F..%2F..%2Fsystem.db/${rec.id}/${name}`,
        `/api/files/%2e%2e/${rec.id}/${name}`,
        `/api/files/posts%2F..%2F..%2F/${rec.id}/${name}`,
        `/api/files/posts/..%2F${rec.id}/${name}`,
        `/api/files/posts/%2e%2e%2f%2e%2e/${name}`,
        `/api/files/posts/${rec.id}/..%2F..%2F..%2F..%2Fsystem.db`,
        `/api/files/posts/${rec.id}/%2e%2e%2f%2e%2e%2f%2e%2e%2f%2e%2e%2fsystem.db`,
        `/api/files/posts/${rec.id}/..%5C..%5Csystem.db`,
        `/api/files/posts/${rec.id}/../../../../system.db`,
        `/api/files/posts/${rec.id}/${name}%00.txt`,
        `/api/files/posts/${rec.id}/.staging`,
        `/api/files/posts/${rec.id}/${name}?db=..%2F..%2Fsystem`,
        `/api/files/posts/${rec.id}/${name}?db=nope`,
      ];
      for (const attempt of attempts) {
        const res = await rawGet(server.url, attempt);
        assert.equal(res.status, 404, `${attempt} → ${res.status} ${res.body}`);
        assert.doesNotMatch(res.body, /SQLite|mine/, attempt);
      }
    });
  });

  test('files of another database are served with ?db= and stored apart', async () => {
    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'second' } })).status, 200);
    await createCollection(server, { name: 'posts', fields: [{ name: 'docs', type: 'file', maxSelect: 2 }], ...OPEN_RULES }, 'second');
    const rec = (await server.request('POST', '/api/collections/posts/records', { db: 'second', raw: form([['docs', { name: 'db.txt', data: 'second db' }]]) })).body;
    assert.deepEqual(filesUnder(path.join(storage, 'second', 'posts', rec.id)), rec.docs);
    const url = `/api/files/posts/${rec.id}/${rec.docs[0]}`;
    assert.equal((await server.request('GET', `${url}?db=second`)).text, 'second db');
    assert.equal((await server.request('GET', url, { db: 'second' })).text, 'second db');
    assert.equal((await server.request('GET', url)).status, 404);
    assert.equal((await server.request('GET', `${url}?db=main`, { db: 'second' })).status, 400);
  });

  test('uploads a crash left in the staging directory are removed at start', async () => {
    const dir = path.join(server.dir, 'crash-test');
    mkdirSync(path.join(dir, '.staging'), { recursive: true });
    writeFileSync(path.join(dir, '.staging', 'half-an-upload'), 'partial');
    const store = new FileStore({ storage: new LocalFileStorage(dir), stagingDir: path.join(dir, '.staging'), requestLimit: UPLOAD_LIMIT });
    await store.start();
    assert.deepEqual(filesUnder(dir), []);
  });
});
