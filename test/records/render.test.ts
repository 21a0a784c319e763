import assert from 'node:assert/strict';
import fc from 'fast-check';
import { after, before, describe, test } from 'node:test';
import { everyFieldType } from '../openapi/helpers.ts';
import { type RecordShape, shapeOf } from '../../src/records/shape.ts';
import { serializeRecord, type Viewer } from '../../src/records/serialize.ts';
import { rendererOf } from '../../src/records/render.ts';
import type { Row } from '../../src/storage/index.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

// Whatever a column may hold: what Cairn writes, what a table adopted from elsewhere may hold. (Both
// drivers read SQL NULL as null; a row never holds undefined.)
const cell = fc.oneof(
  fc.constant(null),
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.integer(),
  fc.double(),
  fc.constantFrom(0, 1, '0', '1', 'true', 'false', '', '[]', '["a","b"]', '{"x":[1,{"y":null}]}', 'not json', '"quoted"', '2024-01-02 03:04:05.678Z'),
  fc.json(),
);

describe('records rendered straight from rows', () => {
  let server: TestServer;
  let shapes: RecordShape[];

  before(async () => {
    server = await startServer();
    await everyFieldType(server);
    const db = server.services.registry.opened('main')!;
    const set = await server.services.collections.all(db);
    shapes = ['posts', 'users', 'tags', 'blog_entries'].map((name) => shapeOf(set.find(name)!));
  });
  after(async () => {
    await server?.close();
  });

  test('give the JSON text serializeRecord gives, for every field type, viewer and value', () => {
    const viewers = (shape: RecordShape, rowId: string): Viewer[] => [
      { privileged: true },
      { privileged: false },
      { privileged: false, authRecordId: rowId, authCollectionId: shape.collection.id },
      { privileged: false, authRecordId: 'someoneelse0000', authCollectionId: shape.collection.id },
    ];
    for (const shape of shapes) {
      const columns = ['id', 'created', 'updated', 'email', 'emailVisibility', 'verified', ...shape.fields.map((f) => f.name)];
      const row = fc.record(Object.fromEntries(columns.map((c) => [c, c === 'id' ? fc.string({ minLength: 1 }) : cell]))) as fc.Arbitrary<Row>;
      fc.assert(
        fc.property(row, (r) => {
          for (const viewer of viewers(shape, String(r.id))) {
            assert.equal(rendererOf(shape, viewer)(r, viewer), JSON.stringify(serializeRecord(r, shape, viewer)), `${shape.collection.name} as ${JSON.stringify(viewer)}`);
          }
        }),
        { numRuns: 300 },
      );
    }
  });

  test('views and lists answer the same bytes as before, through the API', async () => {
    const created = await server.admin('POST', '/api/collections/posts/records', { body: { title: 'A "quoted" title\n', views: 3, published: true, flags: ['a', 'c'], meta: { deep: [1, { x: null }] }, secret_note: 'hidden' } });
    assert.equal(created.status, 200, created.text);
    const viewed = await server.admin('GET', `/api/collections/posts/records/${created.body.id}`);
    assert.deepEqual(viewed.body, created.body);
    assert.equal(viewed.body.secret_note, 'hidden', 'administrators see hidden fields');
    assert.match(String(viewed.headers.get('content-type')), /^application\/json/);
    const listed = await server.admin('GET', '/api/collections/posts/records?perPage=5');
    assert.deepEqual(listed.body.items[0], created.body);
    assert.deepEqual(Object.keys(listed.body), ['page', 'perPage', 'totalItems', 'totalPages', 'items']);
  });
});
