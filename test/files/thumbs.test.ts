import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import sharp from 'sharp';
import { filesUnder, form } from '../helpers/files.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

/** A 200 × 100 picture: red on the left half, blue on the right, in the given format. */
async function picture(format: 'png' | 'jpeg' | 'gif' | 'webp', options: { orientation?: number } = {}): Promise<Buffer> {
  const half = (r: number, b: number) => sharp({ create: { width: 100, height: 100, channels: 3, background: { r, g: 0, b } } }).png().toBuffer();
  let image = sharp({ create: { width: 200, height: 100, channels: 3, background: { r: 0, g: 0, b: 0 } } }).composite([
    { input: await half(255, 0), left: 0, top: 0 },
    { input: await half(0, 255), left: 100, top: 0 },
  ]);
  if (options.orientation) image = image.withMetadata({ orientation: options.orientation });
  return image.toFormat(format).toBuffer();
}

interface Fetched {
  status: number;
  type: string | null;
  disposition: string | null;
  bytes: Buffer;
}

describe('image thumbnails (?thumb=)', () => {
  let server: TestServer;
  let storage: string;
  const images: Record<string, Buffer> = {};

  const fetchFile = async (record: { id: string }, name: string, query = '', collection = 'photos'): Promise<Fetched> => {
    const res = await fetch(`${server.url}/api/files/${collection}/${record.id}/${name}${query}`);
    return { status: res.status, type: res.headers.get('content-type'), disposition: res.headers.get('content-disposition'), bytes: Buffer.from(await res.arrayBuffer()) };
  };
  const sizeOf = async (bytes: Buffer) => {
    const meta = await sharp(bytes).metadata();
    return `${meta.width}x${meta.height}`;
  };
  const upload = async (name: string, data: Buffer, collection = 'photos') => {
    const res = await server.request('POST', `/api/collections/${collection}/records`, { raw: form([['image', { name, data }]]) });
    assert.equal(res.status, 200, res.text);
    return res.body as { id: string; image: string };
  };

  before(async () => {
    server = await startServer();
    storage = path.join(server.dir, 'storage');
    const fields = [{ name: 'image', type: 'file', options: { maxSelect: 1, thumbs: ['50x50', '40x0', '0x20', '60x30t', '30x60t', '30x60b', '30x60f', '400x400f', '5000x5000'] } }];
    const open = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };
    await createCollection(server, { name: 'photos', fields, ...open });
    await createCollection(server, { name: 'secrets', fields: [{ name: 'image', type: 'file', options: { maxSelect: 1, protected: true, thumbs: ['50x50'] } }], ...open, viewRule: '@request.auth.id != ""' });
    for (const format of ['png', 'jpeg', 'gif', 'webp'] as const) images[format] = await picture(format);
  });

  after(async () => {
    await server?.close();
  });

  test('each size of the field is made as PocketBase makes it, served under its own name, and stored beside the original', async () => {
    const record = await upload('photo.png', images.png);
    const expected: Record<string, string> = {
      '50x50': '50x50', // covers the box, cropped from the centre
      '40x0': '40x20', // the width, proportions kept
      '0x20': '40x20', // the height, proportions kept
      '30x60t': '30x60',
      '30x60f': '30x15', // fits inside the box
      '400x400f': '200x100', // never enlarged to fit
      '100x100': '100x100', // PocketBase's dashboard size, served whatever the field lists
    };
    for (const [size, dimensions] of Object.entries(expected)) {
      const res = await fetchFile(record, record.image, `?thumb=${size}`);
      assert.equal(res.status, 200, size);
      assert.equal(res.type, 'image/png', size);
      assert.equal(await sizeOf(res.bytes), dimensions, size);
      assert.match(res.disposition ?? '', new RegExp(`filename="${size}_${record.image}"`));
    }
    const stored = filesUnder(storage).filter((f) => f.includes(record.id));
    assert.ok(stored.includes(path.join('main', 'photos', record.id, `thumbs_${record.image}`, `50x50_${record.image}`)), stored.join('\n'));
    // A second request serves the stored thumbnail: the same bytes.
    const again = await fetchFile(record, record.image, '?thumb=50x50');
    assert.deepEqual(again.bytes, (await fetchFile(record, record.image, '?thumb=50x50')).bytes);
  });

  test('the crop keeps the part asked for: the centre of red and blue, the top, the bottom', async () => {
    // 60x30t of a 200 × 100 picture is the whole of it scaled (the proportions are the same); 30x60
    // crops a strip from the middle: half red, half blue.
    const record = await upload('halves.png', images.png);
    const pixels = async (size: string) => {
      const res = await fetchFile(record, record.image, `?thumb=${size}`);
      const { data, info } = await sharp(res.bytes).raw().toBuffer({ resolveWithObject: true });
      const at = (x: number, y: number) => {
        const i = (y * info.width + x) * info.channels;
        return data[i] > 200 ? 'red' : data[i + 2] > 200 ? 'blue' : `other(${data[i]},${data[i + 1]},${data[i + 2]})`;
      };
      return { left: at(1, info.height / 2), right: at(info.width - 2, info.height / 2) };
    };
    assert.deepEqual(await pixels('30x60t'), { left: 'red', right: 'blue' });
    assert.deepEqual(await pixels('60x30t'), { left: 'red', right: 'blue' });
    assert.deepEqual(await pixels('50x50'), { left: 'red', right: 'blue' });
  });

  test('a JPEG gives a JPEG, a GIF a GIF, a WebP a PNG', async () => {
    for (const [format, type] of [
      ['jpeg', 'image/jpeg'],
      ['gif', 'image/gif'],
      ['webp', 'image/png'],
    ] as const) {
      const record = await upload(`photo.${format}`, images[format]);
      const res = await fetchFile(record, record.image, '?thumb=50x50');
      assert.equal(res.status, 200, format);
      assert.equal(res.type, type, format);
      assert.equal(await sizeOf(res.bytes), '50x50', format);
    }
  });

  test('a photo is turned as its EXIF orientation says before it is resized', async () => {
    // Stored 200 × 100, shown 100 × 200 (orientation 6: turned a quarter clockwise).
    const turned = await picture('jpeg', { orientation: 6 });
    assert.equal((await sharp(turned).metadata()).orientation, 6);
    const record = await upload('turned.jpg', turned);
    const res = await fetchFile(record, record.image, '?thumb=40x0');
    assert.equal(await sizeOf(res.bytes), '40x80');
    assert.equal((await sharp(res.bytes).metadata()).orientation, undefined, 'the metadata is not carried over');
  });

  test('the original is served for a size the field does not list, a size too large, a file that is not an image, and a broken image', async () => {
    const record = await upload('photo.png', images.png);
    for (const size of ['77x77', '5000x5000', '0x0', 'abc', '50x50x']) {
      const res = await fetchFile(record, record.image, `?thumb=${encodeURIComponent(size)}`);
      assert.equal(res.status, 200, size);
      assert.deepEqual(res.bytes, images.png, size);
      assert.match(res.disposition ?? '', new RegExp(`filename="${record.image}"`), size);
    }
    const text = await upload('notes.txt', Buffer.from('not a picture'));
    assert.equal((await fetchFile(text, text.image, '?thumb=50x50')).bytes.toString(), 'not a picture');
    // A PNG cut off half way: its type is sniffed as PNG, and it cannot be decoded.
    const broken = images.png.subarray(0, Math.floor(images.png.length / 2));
    const bad = await upload('broken.png', broken);
    const res = await fetchFile(bad, bad.image, '?thumb=50x50');
    assert.equal(res.status, 200);
    assert.deepEqual(res.bytes, broken);
    assert.ok(!filesUnder(storage).some((f) => f.includes(`50x50_${bad.image}`)), 'no thumbnail stored for it');
  });

  test('twenty requests at once for a new thumbnail all get it, and nothing is left in staging', async () => {
    const record = await upload('busy.png', images.png);
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetchFile(record, record.image, '?thumb=30x60b')));
    for (const a of answers) {
      assert.equal(a.status, 200);
      assert.deepEqual(a.bytes, answers[0].bytes);
    }
    assert.equal(await sizeOf(answers[0].bytes), '30x60');
    const staging = filesUnder(path.join(storage, '.staging'));
    assert.deepEqual(staging, [], 'nothing left in staging');
  });

  test('a protected file’s thumbnail needs a file token as the file does', async () => {
    const user = await createUser(server, 'thumbs@example.com');
    const record = await upload('secret.png', images.png, 'secrets');
    assert.equal((await fetchFile(record, record.image, '?thumb=50x50', 'secrets')).status, 404);
    const token = (await server.request('POST', '/api/files/token', { token: user.token })).body.token;
    const res = await fetchFile(record, record.image, `?thumb=50x50&token=${encodeURIComponent(token)}`, 'secrets');
    assert.equal(res.status, 200);
    assert.equal(await sizeOf(res.bytes), '50x50');
  });

  test('thumbnails go with their file: replaced, and with the record deleted', async () => {
    const record = await upload('first.png', images.png);
    assert.equal((await fetchFile(record, record.image, '?thumb=50x50')).status, 200);
    const folder = path.join('main', 'photos', record.id);
    assert.ok(filesUnder(storage).some((f) => f.startsWith(path.join(folder, `thumbs_${record.image}`))));
    const replaced = await server.request('PATCH', `/api/collections/photos/records/${record.id}`, { raw: form([['image', { name: 'second.png', data: images.png }]]) });
    assert.equal(replaced.status, 200, replaced.text);
    assert.deepEqual(
      filesUnder(storage).filter((f) => f.startsWith(folder)),
      [path.join(folder, replaced.body.image)],
      'the old file and its thumbnails are gone',
    );
    assert.equal((await fetchFile(record, replaced.body.image, '?thumb=50x50')).status, 200);
    assert.equal((await server.request('DELETE', `/api/collections/photos/records/${record.id}`)).status, 204);
    assert.deepEqual(filesUnder(storage).filter((f) => f.startsWith(folder)), []);
  });
});
