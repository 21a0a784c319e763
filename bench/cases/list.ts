import type { BenchCase } from '../case.ts';
import { collectionIdOf, createPosts, post, type PostRow, postJson, rememberCollection } from './posts.ts';

const NAME = 'bench_list';
const RECORDS = 10_000;
const PAGES = 20;

/** GET a page of 30, newest first, with the total count, from 10,000 records (pages 1-20 cycled). */
export const listCase: BenchCase = {
  name: 'list-30',
  description: `list 30 of ${RECORDS.toLocaleString('en')} records (sort=-created, totals, pages 1-${PAGES})`,
  target: 0.5,

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, NAME);
    await ctx.cairn.createRecords(NAME, RECORDS, post);
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
  },

  baseline(app, db) {
    const collectionId = collectionIdOf(db, NAME);
    // The same statements Cairn runs for this list: the page in sort order (insertion order breaks
    // ties) and the total.
    const page = db.prepare(`SELECT id, created, updated, title, body, views, published FROM ${NAME} t0 ORDER BY t0.created DESC, t0.rowid LIMIT ? OFFSET ?`);
    const count = db.prepare(`SELECT COUNT(*) AS n FROM ${NAME} t0`);
    app.get<{ Querystring: { page?: string; perPage?: string } }>(`/api/collections/${NAME}/records`, async (req) => {
      const pageNo = Math.max(1, Number(req.query.page) || 1);
      const perPage = Math.min(500, Number(req.query.perPage) || 30);
      const rows = page.all(perPage, (pageNo - 1) * perPage) as PostRow[];
      const totalItems = (count.get() as { n: number }).n;
      return { page: pageNo, perPage, totalItems, totalPages: Math.ceil(totalItems / perPage), items: rows.map((r) => postJson(r, collectionId, NAME)) };
    });
  },

  request: () => ({
    method: 'GET',
    paths: Array.from({ length: PAGES }, (_, i) => `/api/collections/${NAME}/records?page=${i + 1}&perPage=30&sort=-created`),
    expectStatus: 200,
  }),
};
