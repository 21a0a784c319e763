import type { BenchCase } from '../case.ts';
import { baselineView, POST_FIELDS, post, rememberCollection } from './posts.ts';

const NAME = 'bench_cyclic';
const RECORDS = 9;
const DEEP = 'links.links.links.links.links.links';

/**
 * The worst expand a guest can ask for: nine records each related to the eight others, expanded six
 * levels deep (8^6 nested records, about 1.4 GB of JSON unbounded). Cairn answers 400 once the
 * answer's weight passes the expand bound (API contract §20); the baseline answers the same record
 * without any expand, so the ratio is what the refusal costs against the cheapest view there is.
 */
export const expandCyclicCase: BenchCase<string[]> = {
  name: 'expand-cyclic-refused',
  description: `refuse a guest's six-level expand over ${RECORDS} mutually related records (GET, 400)`,
  target: 0.1,

  async prepare(ctx) {
    const collection = await ctx.cairn.admin<{ id: string }>('POST', '/api/collections', {
      name: NAME,
      type: 'base',
      fields: POST_FIELDS,
      listRule: '',
      viewRule: '',
    });
    const ids = await ctx.cairn.createRecords(NAME, RECORDS, post);
    await ctx.cairn.admin('PATCH', `/api/collections/${NAME}`, {
      fields: [...POST_FIELDS, { name: 'links', type: 'relation', options: { toCollection: NAME, maxSelect: RECORDS } }],
    });
    for (const id of ids) await ctx.cairn.admin('PATCH', `/api/collections/${NAME}/records/${id}`, { links: ids.filter((x) => x !== id) });
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
    return ids;
  },

  baseline(app, db) {
    baselineView(app, db, NAME);
  },

  request: (ids, target) => ({
    method: 'GET',
    paths: ids.map((id) => `/api/collections/${NAME}/records/${id}?expand=${DEEP}`),
    expectStatus: target === 'cairn' ? 400 : 200,
  }),
};
