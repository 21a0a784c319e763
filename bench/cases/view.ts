import type BetterSqlite3 from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import type { BenchCase } from '../case.ts';
import { collectionIdOf, createPosts, post, type PostRow, postJson, rememberCollection } from './posts.ts';

const NAME = 'bench_view';
const RECORDS = 1000;

/** The baseline's view of one record of a posts table by id; `shape` changes the answer (enrich cases). */
export function baselineView(app: FastifyInstance, db: BetterSqlite3.Database, name: string, shape = (record: ReturnType<typeof postJson>): object => record): void {
  const collectionId = collectionIdOf(db, name);
  const select = db.prepare(`SELECT id, created, updated, title, body, views, published FROM ${name} WHERE id = ?`);
  app.get<{ Params: { id: string } }>(`/api/collections/${name}/records/:id`, async (req, reply) => {
    const row = select.get(req.params.id) as PostRow | undefined;
    if (!row) return reply.status(404).send({ code: 404, message: 'Not found.', data: {} });
    return shape(postJson(row, collectionId, name));
  });
}

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

  baseline: (app, db) => baselineView(app, db, NAME),

  request: (ids) => ({ method: 'GET', paths: ids.map((id) => `/api/collections/${NAME}/records/${id}`), expectStatus: 200 }),
};
