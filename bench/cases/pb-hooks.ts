import type { BenchCase } from '../case.ts';
import { baselineCreate } from './create.ts';
import { createPosts, post, rememberCollection } from './posts.ts';

const PB_HOOKED = 'bench_create_pb_hooked';

/**
 * `create` on a collection with one pb_hooks `onRecordCreate` handler (bench/pb_hooks/bench.pb.js)
 * that reads one record by id synchronously through `$app` before the write: what running a PocketBase
 * handler in a worker thread costs a write. Issue 38: at most 2x a plain create's CPU, so at least
 * half its throughput on the same cores.
 */
export const createPbHookedCase: BenchCase = {
  name: 'create-pb-hooked',
  description: 'create a record through one pb_hooks before-handler that calls $app.findRecordById',
  target: 0.2,
  relativeTo: { name: 'create', target: 0.5 },

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, PB_HOOKED);
    await ctx.cairn.createRecords(PB_HOOKED, 1, () => ({ ...post(0), id: 'benchseed000001' }));
    ctx.copyToBaseline(PB_HOOKED);
    rememberCollection(ctx.baseline, PB_HOOKED, collection.id);
  },

  baseline: (app, db) => baselineCreate(app, db, PB_HOOKED),

  request: () => ({ method: 'POST', paths: [`/api/collections/${PB_HOOKED}/records`], body: post(7), expectStatus: 200 }),
};
