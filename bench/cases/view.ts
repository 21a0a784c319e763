import type { BenchCase } from '../case.ts';
import { baselineView, createPosts, post, rememberCollection } from './posts.ts';

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
    baselineView(app, db, NAME);
  },

  request: (ids) => ({ method: 'GET', paths: ids.map((id) => `/api/collections/${NAME}/records/${id}`), expectStatus: 200 }),
};
