import { defineHooks } from 'cairn';

const DAY_MS = 24 * 60 * 60 * 1000;
const PAGE = 200;

/**
 * Every night at 03:00 UTC, carts nobody touched for a day are deleted. On several nodes the job runs
 * once per night, on one of them.
 */
export default defineHooks((app) => {
  app.cronAdd('nightly-cleanup', '0 3 * * *', async () => {
    const before = new Date(Date.now() - DAY_MS);
    const records = app.records();
    let deleted = 0;
    for (;;) {
      const stale = await records.find('carts', { filter: 'updated < {:before}', params: { before }, limit: PAGE });
      // One transaction per page: a page is deleted whole or not at all.
      await records.transaction(async (tx) => {
        for (const cart of stale) await tx.delete('carts', cart.id);
      });
      deleted += stale.length;
      if (stale.length < PAGE) break;
    }
    app.logger.info('abandoned carts deleted', { deleted, before: before.toISOString() });
  });
});
