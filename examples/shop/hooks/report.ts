import { BadRequestError, defineHooks, requireSuperuser } from 'cairn';

/**
 * GET /api/shop/report[?since=2025-06-01]: what the paid orders sold, per product, for superusers
 * (and admin API keys). Other callers get 401 or 403 from the middleware.
 */
export default defineHooks((app) => {
  app.routerAdd(
    'GET',
    '/api/shop/report',
    async (e) => {
      const sinceText = e.query.get('since');
      const since = sinceText ? new Date(sinceText) : undefined;
      if (since && Number.isNaN(since.getTime())) {
        throw new BadRequestError('Invalid report period.', { since: { code: 'validation_invalid_date', message: 'Use a date such as 2025-06-01.' } });
      }
      const paid = since ? 'status = "paid" && created >= {:since}' : 'status = "paid"';
      const records = e.app.records(e.db);
      const orders = await records.count('orders', paid, { since });
      const lines = await records.find('order_lines', {
        filter: since ? 'order.status = "paid" && order.created >= {:since}' : 'order.status = "paid"',
        params: { since },
      });
      const sold = new Map<string, { quantity: number; revenue: number }>();
      for (const line of lines) {
        const entry = sold.get(line.product) ?? { quantity: 0, revenue: 0 };
        entry.quantity += Number(line.quantity);
        entry.revenue += Number(line.quantity) * Number(line.price);
        sold.set(line.product, entry);
      }
      const products = (await records.find('products', { sort: 'name' }))
        .map((p) => ({ id: p.id, name: p.name, slug: p.slug, ...(sold.get(p.id) ?? { quantity: 0, revenue: 0 }) }))
        .sort((a, b) => b.revenue - a.revenue);
      e.json(200, {
        since: since?.toISOString() ?? null,
        orders,
        revenue: products.reduce((sum, p) => sum + p.revenue, 0),
        products,
      });
    },
    requireSuperuser(),
  );
});
