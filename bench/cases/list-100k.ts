import type { BenchCase, PrepareContext } from '../case.ts';
import { collectionIdOf, createPosts, post, type PostRow, postJson, rememberCollection } from './posts.ts';

const NAME = 'bench_list_100k';
const RECORDS = 100_000;
const PAGES = 20;
// At most CAIRN_BATCH_MAX_REQUESTS' default per batch.
const BATCH = 50;
// `views` runs 0-999 (posts.ts): one record in ten matches, and no index helps.
const FILTER = 'views<100';

let prepared: Promise<void> | undefined;

/** Fills the collection through Cairn's batch API (2,000 batches of 50, a few in flight) and copies it to the baseline, once for both cases. */
function prepareRecords(ctx: PrepareContext): Promise<void> {
  prepared ??= (async () => {
    const collection = await createPosts(ctx.cairn, NAME);
    let next = 0;
    const worker = async () => {
      while (next < RECORDS) {
        const from = next;
        next += BATCH;
        const requests = Array.from({ length: Math.min(BATCH, RECORDS - from) }, (_, i) => ({ method: 'POST', url: `/api/collections/${NAME}/records`, body: post(from + i) }));
        await ctx.cairn.admin('POST', '/api/batch', { requests });
      }
    };
    await Promise.all(Array.from({ length: 4 }, worker));
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
  })();
  return prepared;
}

type Query = { Querystring: { page?: string; perPage?: string; filter?: string } };

/** Both list cases' baseline route: the statements Cairn runs (the page in sort order, then the total), with the filter's condition when one is given. */
function baselineList(app: Parameters<BenchCase['baseline']>[0], db: Parameters<BenchCase['baseline']>[1]): void {
  const collectionId = collectionIdOf(db, NAME);
  const statements = (where: string) => ({
    page: db.prepare(`SELECT id, created, updated, title, body, views, published FROM ${NAME} t0 ${where} ORDER BY t0.created DESC, t0.rowid LIMIT ? OFFSET ?`),
    count: db.prepare(`SELECT COUNT(*) AS n FROM ${NAME} t0 ${where}`),
  });
  const all = statements('');
  const filtered = statements('WHERE t0.views < ?');
  app.get<Query>(`/api/collections/${NAME}/records`, async (req) => {
    const pageNo = Math.max(1, Number(req.query.page) || 1);
    const perPage = Math.min(500, Number(req.query.perPage) || 30);
    const filter = req.query.filter === FILTER;
    const s = filter ? filtered : all;
    const args = filter ? [100] : [];
    const rows = s.page.all(...args, perPage, (pageNo - 1) * perPage) as PostRow[];
    const totalItems = (s.count.get(...args) as { n: number }).n;
    return { page: pageNo, perPage, totalItems, totalPages: Math.ceil(totalItems / perPage), items: rows.map((r) => postJson(r, collectionId, NAME)) };
  });
}

/** `list-30` on ten times the records: a page of 30 newest first with the total count (a COUNT(*) over 100,000 rows on both sides). */
export const list100kCase: BenchCase = {
  name: 'list-100k',
  description: `list 30 of ${RECORDS.toLocaleString('en')} records (sort=-created, totals, pages 1-${PAGES})`,
  target: 0.5,
  prepare: prepareRecords,
  baseline: baselineList,
  request: () => ({
    method: 'GET',
    paths: Array.from({ length: PAGES }, (_, i) => `/api/collections/${NAME}/records?page=${i + 1}&perPage=30&sort=-created`),
    expectStatus: 200,
  }),
};

/** A filtered list on the same records: no index serves the filter, so the page and the total each scan. */
export const list100kFilterCase: BenchCase = {
  name: 'list-100k-filter',
  description: `list 30 of the ${(RECORDS / 10).toLocaleString('en')} among ${RECORDS.toLocaleString('en')} records matching \`${FILTER}\` (sort=-created, totals, pages 1-${PAGES})`,
  target: 0.5,
  prepare: prepareRecords,
  // Registered by list-100k when both run: one route serves both.
  baseline: (app, db) => {
    if (!app.hasRoute({ method: 'GET', url: `/api/collections/${NAME}/records` })) baselineList(app, db);
  },
  request: () => ({
    method: 'GET',
    paths: Array.from({ length: PAGES }, (_, i) => `/api/collections/${NAME}/records?page=${i + 1}&perPage=30&sort=-created&filter=${encodeURIComponent(FILTER)}`),
    expectStatus: 200,
  }),
};
