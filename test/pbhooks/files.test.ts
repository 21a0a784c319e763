import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// An inbox of documents: uploads taken from a route's form, files made by the hooks themselves.
const DOCS = `
routerAdd("POST", "/api/inbox", (e) => {
  const form = e.requestInfo().body;
  const uploads = e.findUploadedFiles("scan");
  const doc = new Record($app.findCollectionByNameOrId("docs"));
  doc.set("title", form.title);
  doc.set("files", uploads);
  $app.save(doc);
  return e.json(200, { id: doc.id, files: doc.get("files"), names: uploads.map((f) => f.originalName), size: uploads[0].size });
});

routerAdd("POST", "/api/inbox/made", (e) => {
  const doc = new Record($app.findCollectionByNameOrId("docs"));
  doc.set("title", "made");
  doc.set("files", [$filesystem.fileFromBytes("hello from bytes", "note.txt"), $filesystem.fileFromPath(__hooks + "/sample.txt")]);
  $app.save(doc);
  const url = e.requestInfo().body.url;
  doc.set("files+", $filesystem.fileFromURL(url));
  $app.save(doc);
  return e.json(200, { id: doc.id, files: doc.get("files") });
});

// Go's FormFile, as some apps read an upload: the bytes through read(buf), the header to store.
routerAdd("POST", "/api/inbox/form-file", (e) => {
  const result = e.request.formFile("scan");
  const reader = result[0];
  const header = result[1];
  const buf = new Uint8Array(4);
  let text = "";
  let n = reader.read(buf);
  while (n > 0) {
    text += String.fromCharCode(...buf.slice(0, n));
    n = reader.read(buf);
  }
  reader.close();
  const doc = new Record($app.findCollectionByNameOrId("docs"));
  doc.set("title", header.filename);
  doc.set("files", $filesystem.fileFromMultipart(header));
  $app.save(doc);
  return e.json(200, { id: doc.id, text, size: header.size, files: doc.get("files") });
});

routerAdd("POST", "/api/inbox/none", (e) => {
  try {
    e.findUploadedFiles("scan");
    return e.json(200, { found: true });
  } catch (err) {
    return e.json(200, { found: false });
  }
});
`;

describe('pb_hooks: uploaded files and files made by $filesystem', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    pb = pbDir({ 'docs.pb.js': DOCS, 'sample.txt': 'sample text on disk' });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
    await createCollection(server, {
      name: 'docs',
      listRule: '',
      viewRule: '',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'files', type: 'file', maxSelect: 5, maxSize: 1000000 },
      ],
    });
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  const fileUrl = (id: string, name: string) => `${server.url}/api/files/docs/${id}/${name}`;

  test('e.findUploadedFiles gives a multipart route its files, which a record stores', async () => {
    const form = new FormData();
    form.set('title', 'scan one');
    form.append('scan', new Blob(['%PDF-1.4 first page'], { type: 'application/pdf' }), 'page1.pdf');
    form.append('scan', new Blob(['second file'], { type: 'text/plain' }), 'page2.txt');
    const res = await fetch(`${server.url}/api/inbox`, { method: 'POST', body: form });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.deepEqual(body.names, ['page1.pdf', 'page2.txt']);
    assert.equal(body.size, '%PDF-1.4 first page'.length);
    assert.equal(body.files.length, 2);
    assert.match(body.files[0], /^page1_\w+\.pdf$/);
    const got = await fetch(fileUrl(body.id, body.files[1]));
    assert.equal(got.status, 200);
    assert.equal(await got.text(), 'second file');
    const none = await server.request('POST', '/api/inbox/none', { body: {} });
    assert.deepEqual(none.body, { found: false });
  });

  test('e.request.formFile gives a reader of the bytes and a header $filesystem.fileFromMultipart stores', async () => {
    const form = new FormData();
    form.append('scan', new Blob(['read in chunks'], { type: 'text/plain' }), 'chunks.txt');
    const res = await fetch(`${server.url}/api/inbox/form-file`, { method: 'POST', body: form });
    const body = await res.json();
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.text, 'read in chunks');
    assert.equal(body.size, 'read in chunks'.length);
    assert.equal(body.files.length, 1);
    assert.equal(await (await fetch(fileUrl(body.id, body.files[0]))).text(), 'read in chunks');
  });

  test('fileFromBytes, fileFromPath and fileFromURL set on a file field and saved', async () => {
    const first = await server.request('GET', '/api/collections/docs/records');
    const doc = first.body.items[0];
    const url = fileUrl(doc.id, doc.files[1]);
    const res = await server.request('POST', '/api/inbox/made', { body: { url } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.files.length, 3);
    const texts = await Promise.all(res.body.files.map(async (n: string) => (await fetch(fileUrl(res.body.id, n))).text()));
    assert.deepEqual(texts, ['hello from bytes', 'sample text on disk', 'second file']);
  });
});
