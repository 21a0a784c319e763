import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PocketBase from 'pocketbase';
import { ADMIN_EMAIL, ADMIN_PASSWORD, createCollection, startServer, type TestServer } from '../helpers/server.ts';

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

describe('PocketBase JS SDK 0.21 and files', () => {
  let server: TestServer;
  let pb: PocketBase;

  before(async () => {
    server = await startServer();
    await createCollection(server, {
      name: 'albums',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'tags', type: 'json' },
        { name: 'photos', type: 'file', options: { maxSelect: 5, mimeTypes: ['image/png'] } },
        { name: 'contract', type: 'file', options: { maxSelect: 1, protected: true } },
      ],
      listRule: '',
      viewRule: '',
      createRule: '',
      updateRule: '',
    });
    pb = new PocketBase(server.url);
    pb.autoCancellation(false);
    await pb.admins.authWithPassword(ADMIN_EMAIL, ADMIN_PASSWORD);
  });
  after(() => server.close());

  test('create(formData) uploads a File and getUrl builds a working URL', async () => {
    const data = new FormData();
    data.append('title', 'Holidays');
    data.append('photos', new File([PNG], 'beach.png', { type: 'image/png' }));
    data.append('photos', new File([PNG], 'sunset.png', { type: 'image/png' }));
    const record = await pb.collection('albums').create(data);
    assert.equal(record.title, 'Holidays');
    assert.equal(record.photos.length, 2);
    assert.match(record.photos[0], /^beach_[a-z0-9]{10}\.png$/);

    const url = pb.files.getUrl(record, record.photos[0]);
    assert.equal(url, `${server.url}/api/files/${record.collectionId}/${record.id}/${record.photos[0]}`);
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'image/png');
    assert.deepEqual(Buffer.from(await res.arrayBuffer()), PNG);

    const download = await fetch(pb.files.getUrl(record, record.photos[1], { download: true }));
    assert.match(download.headers.get('content-disposition')!, /^attachment;/);
  });

  test('a plain object with a Blob goes as multipart with @jsonPayload for typed values', async () => {
    const record = await pb.collection('albums').create({
      title: 'Mixed',
      tags: ['sea', 'sun'],
      photos: [new Blob([PNG], { type: 'image/png' })],
    });
    assert.deepEqual(record.tags, ['sea', 'sun']);
    assert.equal(record.photos.length, 1);
    // A Blob has no name of its own; the SDK's FormData calls it "blob".
    assert.match(record.photos[0], /^blob_[a-z0-9]{10}\.png$/);

    const added = await pb.collection('albums').update(record.id, { 'photos+': new File([PNG], 'more.png') });
    assert.equal(added.photos.length, 2);
    const removed = await pb.collection('albums').update(record.id, { 'photos-': [record.photos[0]] });
    assert.deepEqual(removed.photos, [added.photos[1]]);
    assert.equal((await fetch(pb.files.getUrl(record, record.photos[0]))).status, 404);
  });

  test('SDK errors carry the per-field file errors', async () => {
    await assert.rejects(
      pb.collection('albums').create({ photos: [new File(['just text'], 'fake.png')] }),
      (err: any) => err.status === 400 && err.response.data.photos.code === 'validation_invalid_mime_type',
    );
  });

  test('getToken gives a file token that getUrl puts in the URL of a protected file', async () => {
    const record = await pb.collection('albums').create({ title: 'Signed', contract: new File(['%PDF-1.4\n%%EOF\n'], 'contract.pdf') });
    const token = await pb.files.getToken();
    assert.ok(token);
    const res = await fetch(pb.files.getUrl(record, record.contract, { token }));
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    assert.equal(res.headers.get('cache-control'), 'private, no-store');
  });
});
