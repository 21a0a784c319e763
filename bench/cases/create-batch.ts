import type BetterSqlite3 from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { randomId } from '../../src/lib/ids.ts';
import type { BenchCase } from '../case.ts';
import { collectionIdOf, createPosts, post, type PostRow, postJson, rememberCollection } from './posts.ts';

const NAME = 'bench_create_batch';
const SIZE = 50;
const URL = `/api/collections/${NAME}/records`;

/**
 * 50 creates in one `POST /api/batch` (one transaction), against 50 separate creates (`create`): the
 * batch must be at least 5× faster per record (issue 20). The baseline runs the same 50 inserts in one
 * better-sqlite3 transaction and answers the same `[{status, body}]` list.
 */
export const createBatchCase: BenchCase = {
  name: 'create-batch',
  description: `${SIZE} creates in one batch (POST /api/batch, 4 fields each)`,
  relativeTo: { name: 'create', target: 5 },
  unitsPerRequest: SIZE,

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, NAME);
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
  },

  baseline(app: FastifyInstance, db: BetterSqlite3.Database) {
    const collectionId = collectionIdOf(db, NAME);
    const insert = db.prepare(
      `INSERT INTO ${NAME} (id, created, updated, title, body, views, published) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id, created, updated, title, body, views, published`,
    );
    const insertAll = db.transaction((inputs: Array<{ title: string; body: string; views: number; published: boolean }>) =>
      inputs.map((input) => {
        const now = new Date().toISOString();
        return insert.get(randomId(), now, now, input.title, input.body, input.views, input.published ? 1 : 0) as PostRow;
      }),
    );
    app.post('/api/batch', async (req) => {
      const { requests } = req.body as { requests: Array<{ body: { title: string; body: string; views: number; published: boolean } }> };
      return insertAll(requests.map((r) => r.body)).map((row) => ({ status: 200, body: postJson(row, collectionId, NAME) }));
    });
  },

  request: () => ({
    method: 'POST',
    paths: ['/api/batch'],
    body: { requests: Array.from({ length: SIZE }, (_, i) => ({ method: 'POST', url: URL, body: post(i) })) },
    expectStatus: 200,
  }),
};
