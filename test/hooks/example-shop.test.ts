// through-tsx: a TypeScript hook it loads imports `cairn`, which must be this process's own src/index.ts (a bundle holds a copy)
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { databaseOf } from '../helpers/inspect.ts';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

// The worked example of docs/hooks.md, as it is in the repository: examples/shop's hook files loaded
// into a real server, its YAML migration applied through the API, the whole story driven over HTTP.
const SHOP = fileURLToPath(new URL('../../examples/shop/', import.meta.url));
const MIGRATION = path.join(SHOP, 'migrations', readdirSync(path.join(SHOP, 'migrations')).find((f) => f.endsWith('.yaml'))!);

describe('the example shop (examples/shop)', () => {
  let server: TestServer;
  let ada: Awaited<ReturnType<typeof createUser>>;
  let bob: Awaited<ReturnType<typeof createUser>>;
  const products: Record<string, { id: string; slug: string; price: number }> = {};

  const records = async (collection: string, filter = ''): Promise<any[]> => {
    const res = await server.admin('GET', `/api/collections/${collection}/records?perPage=500&sort=created&filter=${encodeURIComponent(filter)}`);
    assert.equal(res.status, 200, res.text);
    return res.body.items;
  };
  const product = async (name: string, price: number) => {
    const res = await server.admin('POST', '/api/collections/products/records', { body: { name, price } });
    assert.equal(res.status, 200, res.text);
    return res.body;
  };
  /** One batch, as the customer: a draft order, its lines, and the order placed with `total`. */
  const placeOrder = (customer: typeof ada, id: string, total: number, lines: Array<[string, number]>) =>
    server.request('POST', '/api/batch', {
      token: customer.token,
      body: {
        requests: [
          { method: 'POST', url: '/api/collections/orders/records', body: { id, user: customer.id, status: 'draft', total } },
          // A price sent by the client is replaced by the product's.
          ...lines.map(([name, quantity]) => ({ method: 'POST', url: '/api/collections/order_lines/records', body: { order: id, product: products[name].id, quantity, price: 1 } })),
          { method: 'PATCH', url: `/api/collections/orders/records/${id}`, body: { status: 'placed' } },
        ],
      },
    });

  before(async () => {
    server = await startServer({ env: { CAIRN_HOOKS_DIR: path.join(SHOP, 'hooks') } });
    // The schema, as the example's README sets it up through the API.
    const upload = await server.admin('POST', '/api/migrations/upload', { raw: readFileSync(MIGRATION), headers: { 'content-type': 'application/yaml' } });
    assert.equal(upload.status, 200, upload.text);
    const applied = await server.admin('POST', '/api/migrations/apply-pending');
    assert.equal(applied.status, 200, applied.text);
    assert.deepEqual(applied.body.applied, [upload.body.version]);
    ada = await createUser(server, 'ada@example.com');
    bob = await createUser(server, 'bob@example.com');
  });
  after(async () => {
    await server?.close();
  });

  test('the hook files load: their handlers, the report route and the nightly job', async () => {
    const res = await server.admin('GET', '/api/hooks');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.files.map((f: string) => path.basename(f)),
      ['cleanup.ts', 'orders.ts', 'products.ts', 'report.ts'],
      'every file directly in hooks/, in name order; lib/ holds their modules',
    );
    assert.deepEqual(res.body.routes.map((r: any) => `${r.method} ${r.path}`), ['GET /api/shop/report']);
    assert.deepEqual(res.body.cron.map((c: any) => [c.name, c.schedule]), [['nightly-cleanup', '0 3 * * *']]);
  });

  test('products get unique slugs on create, and new ones when renamed', async () => {
    const tart = await product('Crème Brûlée (200 g)', 450);
    assert.equal(tart.slug, 'creme-brulee-200-g');
    const twin = await product('Crème brûlée 200 G', 500);
    assert.equal(twin.slug, 'creme-brulee-200-g-2', 'a slug another product holds gets a suffix');
    const renamed = await server.admin('PATCH', `/api/collections/products/records/${twin.id}`, { body: { name: 'Vanilla Tart' } });
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.body.slug, 'vanilla-tart');
    const repriced = await server.admin('PATCH', `/api/collections/products/records/${twin.id}`, { body: { price: 550 } });
    assert.equal(repriced.body.slug, 'vanilla-tart', 'the slug stays while the name does');
    const coffee = await product('Coffee', 250);
    Object.assign(products, { tart, vanilla: repriced.body, coffee });
    // Anyone may read the catalogue (the migration's rules), by slug too.
    const bySlug = await server.request('GET', `/api/collections/products/records?filter=${encodeURIComponent('slug = "vanilla-tart"')}`);
    assert.deepEqual(bySlug.body.items.map((p: any) => p.name), ['Vanilla Tart']);
  });

  test('a batch places an order with its lines only when the total matches them, inside its transaction', async () => {
    // 2 × 450 + 1 × 550 = 1450.
    const wrong = await placeOrder(ada, 'adaorder0000001', 1000, [['tart', 2], ['vanilla', 1]]);
    assert.equal(wrong.status, 400, wrong.text);
    assert.equal(wrong.body.message, 'Batch transaction failed.');
    const failure = {
      status: 400,
      code: 400,
      message: 'The order total does not match its lines.',
      data: { total: { code: 'validation_total_mismatch', message: 'The lines add up to 1450, not 1000.' } },
    };
    // The failed request's own error under response, as PocketBase ≥ 0.23 names it (API contract §11).
    assert.deepEqual(wrong.body.data.requests['3'], { code: 'batch_request_failed', message: 'Batch request failed.', response: failure });
    assert.deepEqual(await records('orders'), [], 'the draft order rolled back with the batch');
    assert.deepEqual(await records('order_lines'), [], 'and so did its lines');

    const empty = await server.request('POST', '/api/batch', {
      token: ada.token,
      body: {
        requests: [
          { method: 'POST', url: '/api/collections/orders/records', body: { id: 'adaorder0000009', user: ada.id, status: 'draft', total: 0 } },
          { method: 'PATCH', url: '/api/collections/orders/records/adaorder0000009', body: { status: 'placed' } },
        ],
      },
    });
    assert.equal(empty.status, 400);
    assert.equal(empty.body.data.requests['1'].response.data.status.code, 'validation_order_empty');

    const right = await placeOrder(ada, 'adaorder0000001', 1450, [['tart', 2], ['vanilla', 1]]);
    assert.equal(right.status, 200, right.text);
    assert.equal(right.body[3].body.status, 'placed');
    const lines = await records('order_lines');
    assert.deepEqual(
      lines.map((l) => [l.order, l.product, l.quantity, l.price]),
      [
        ['adaorder0000001', products.tart.id, 2, 450],
        ['adaorder0000001', products.vanilla.id, 1, 550],
      ],
      "each line carries its product's price, not the one the client sent",
    );

    // Placed orders are out of the customer's hands (the migration's rules).
    const again = await server.request('PATCH', '/api/collections/orders/records/adaorder0000001', { token: ada.token, body: { status: 'draft' } });
    assert.equal(again.status, 404);
    const others = await server.request('GET', '/api/collections/orders/records/adaorder0000001', { token: bob.token });
    assert.equal(others.status, 404, "another customer cannot see Ada's order");
  });

  test('paying an order mails a receipt after commit; a paid order is never deleted', async () => {
    const paid = await server.admin('PATCH', '/api/collections/orders/records/adaorder0000001', { body: { status: 'paid' } });
    assert.equal(paid.status, 200, paid.text);
    const mailDir = path.join(server.dir, 'mail');
    const receipt = await waitFor(
      () => {
        if (!existsSync(mailDir)) return undefined;
        const files = readdirSync(mailDir).filter((f) => f.endsWith('.eml'));
        return files.map((f) => readFileSync(path.join(mailDir, f), 'utf8')).find((text) => text.includes('Order adaorder0000001 is paid'));
      },
      { what: 'the receipt mail' },
    );
    assert.match(receipt, /^To: ada@example\.com$/m);
    assert.match(receipt, /We received =E2=82=AC14\.50|We received €14\.50/);

    for (const token of [ada.token, server.adminToken]) {
      const refused = await server.request('DELETE', '/api/collections/orders/records/adaorder0000001', { token });
      assert.equal(refused.status, 400, refused.text);
      assert.deepEqual(refused.body, {
        status: 400,
        code: 400,
        message: 'Paid orders cannot be deleted; cancel or refund them instead.',
        data: { status: { code: 'validation_order_paid', message: 'The order is paid.' } },
      });
    }
    assert.equal((await records('orders')).length, 1);
    assert.equal((await records('order_lines')).length, 2);

    // An unpaid order goes, its lines with it (cascade).
    const draft = await placeOrder(bob, 'boborder0000001', 250, [['coffee', 1]]);
    assert.equal(draft.status, 200, draft.text);
    const gone = await server.request('DELETE', '/api/collections/orders/records/boborder0000001', { token: bob.token });
    assert.equal(gone.status, 204, gone.text);
    assert.deepEqual(await records('order_lines', 'order = "boborder0000001"'), []);
  });

  test('the report route answers superusers with totals per product, and refuses everyone else', async () => {
    const bobs = await placeOrder(bob, 'boborder0000002', 1200, [['tart', 1], ['coffee', 3]]);
    assert.equal(bobs.status, 200, bobs.text);
    assert.equal((await server.admin('PATCH', '/api/collections/orders/records/boborder0000002', { body: { status: 'paid' } })).status, 200);
    // Placed but not paid: not in the report.
    assert.equal((await placeOrder(ada, 'adaorder0000002', 900, [['tart', 2]])).status, 200);

    const report = await server.admin('GET', '/api/shop/report');
    assert.equal(report.status, 200, report.text);
    assert.deepEqual(report.body, {
      since: null,
      orders: 2,
      revenue: 1450 + 1200,
      products: [
        { id: products.tart.id, name: 'Crème Brûlée (200 g)', slug: 'creme-brulee-200-g', quantity: 3, revenue: 1350 },
        { id: products.coffee.id, name: 'Coffee', slug: 'coffee', quantity: 3, revenue: 750 },
        { id: products.vanilla.id, name: 'Vanilla Tart', slug: 'vanilla-tart', quantity: 1, revenue: 550 },
      ],
    });

    const future = await server.admin('GET', '/api/shop/report?since=2999-01-01');
    assert.equal(future.status, 200, future.text);
    assert.deepEqual([future.body.since, future.body.orders, future.body.revenue], ['2999-01-01T00:00:00.000Z', 0, 0]);
    const bad = await server.admin('GET', '/api/shop/report?since=yesterday-ish');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.data.since.code, 'validation_invalid_date');

    const asUser = await server.request('GET', '/api/shop/report', { token: ada.token });
    assert.equal(asUser.status, 403, asUser.text);
    assert.deepEqual(asUser.body, { status: 403, code: 403, message: 'Only superusers may perform this request.', data: {} });
    assert.equal((await server.request('GET', '/api/shop/report')).status, 401);
  });

  test('the nightly job deletes carts untouched for a day and keeps the others', async () => {
    const cart = async (customer: typeof ada) => {
      const res = await server.request('POST', '/api/collections/carts/records', { token: customer.token, body: { user: customer.id, items: [{ product: products.coffee.id, quantity: 1 }] } });
      assert.equal(res.status, 200, res.text);
      return res.body.id as string;
    };
    const stale = [await cart(ada), await cart(bob)];
    const fresh = await cart(ada);
    // A day and a minute pass for the stale carts: their `updated` is moved back in the database.
    const main = await databaseOf(server);
    const longAgo = new Date(Date.now() - 24 * 3_600_000 - 60_000).toISOString();
    for (const id of stale) await main.run('UPDATE carts SET updated = ? WHERE id = ?', [longAgo, id]);

    // The job cleanup.ts registered, run now by an administrator rather than at 03:00.
    assert.equal((await server.admin('POST', '/api/hooks/cron/nightly-cleanup')).status, 204);
    assert.deepEqual((await records('carts')).map((c) => c.id), [fresh]);
  });
});
