import type { BenchCase } from '../case.ts';
import { collectionIdOf, createPosts, post, type PostRow, postJson, rememberCollection } from './posts.ts';

const NAME = 'bench_view';
const RECORDS = 1000;

/** GET one record by id (cycling over a thousand ids). */
export const viewCase: BenchCase<string[]> = {
  name: 'view-by-id',
  description: `view a record by id (GET, ${RECORDS} records cycled)`,
  target: 0.6,

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, NAME);
    const ids = await ctx.cairn.createRecords(NAME, RECORDS, post);
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
    return ids;
  },

  baseline(app, db) {
    const collectionId = collectionIdOf(db, NAME);
    const select = db.prepare(`SELECT id, created, updated, title, body, views, published FROM ${NAME} WHERE id = ?`);
    app.get<{ Params: { id: string } }>(`/api/collections/${NAME}/records/:id`, async (req, reply) => {
      const row = select.get(req.params.id) as PostRow | undefined;
      if (!row) return reply.status(404).send({ code: 404, message: 'Not found.', data: {} });
      return postJson(row, collectionId, NAME);
    });
  },

  request: (ids) => ({ method: 'GET', paths: ids.map((id) => `/api/collections/${NAME}/records/${id}`), expectStatus: 200 }),
};
