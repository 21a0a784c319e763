import { CONSTANT } from '../hooks/lib/constant.ts';
import type { BenchCase } from '../case.ts';
import { baselineCreate } from './create.ts';
import { baselineView, createPosts, post, rememberCollection } from './posts.ts';

const HOOKED = 'bench_create_hooked';
const ENRICHED = 'bench_view_enriched';
const RECORDS = 1000;

/**
 * `create` on a collection with one no-op `onRecordCreate` and one no-op after-success handler
 * (bench/hooks/bench.ts): what the hook chain costs a write. Issue 28: at most 5 % more CPU per
 * create than `create`.
 */
export const createHookedCase: BenchCase = {
  name: 'create-hooked',
  description: 'create a record with a no-op before-hook and a no-op after-success hook',
  target: 0.45,
  relativeTo: { name: 'create', target: 0.95 },

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, HOOKED);
    ctx.copyToBaseline(HOOKED);
    rememberCollection(ctx.baseline, HOOKED, collection.id);
  },

  baseline: (app, db) => baselineCreate(app, db, HOOKED),

  request: () => ({ method: 'POST', paths: [`/api/collections/${HOOKED}/records`], body: post(7), expectStatus: 200 }),
};

/** `view-by-id` on a collection whose records pass one enrich handler deleting a key. Target: ≥ 90 % of view-by-id. */
export const viewEnrichedCase: BenchCase<string[]> = {
  name: 'view-enriched',
  description: `view a record by id through one enrich hook deleting a key (${RECORDS} records cycled)`,
  target: 0.55,
  relativeTo: { name: 'view-by-id', target: 0.9 },

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, ENRICHED);
    const ids = await ctx.cairn.createRecords(ENRICHED, RECORDS, post);
    ctx.copyToBaseline(ENRICHED);
    rememberCollection(ctx.baseline, ENRICHED, collection.id);
    return ids;
  },

  baseline: (app, db) =>
    baselineView(app, db, ENRICHED, ({ body: _body, ...rest }) => rest),

  request: (ids) => ({ method: 'GET', paths: ids.map((id) => `/api/collections/${ENRICHED}/records/${id}`), expectStatus: 200 }),
};

/** A route added by a hook answering a constant JSON, against a bare Fastify route answering the same. Target: ≥ 85 %. */
export const hookRouteCase: BenchCase = {
  name: 'hook-route',
  description: 'GET a routerAdd route answering a constant JSON',
  target: 0.85,

  async prepare() {
    return undefined;
  },

  baseline(app) {
    app.get('/api/bench/constant', async () => CONSTANT);
  },

  request: () => ({ method: 'GET', paths: ['/api/bench/constant'], expectStatus: 200 }),
};
