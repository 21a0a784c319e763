import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// Straight-line handlers (src/pbhooks/straight.ts) are tried on the main thread, where a record by
// id is read in the write's transaction on SQLite; a try that cannot finish there runs again in a
// worker. Whichever runs it, the answers must be PocketBase's: these hold on both drivers.
const HOOKS = `
// Straight-line: tried on the main thread.
onRecordCreate((e) => {
  const product = $app.findRecordById("products", e.record.getString("product"));
  if (product.getInt("stock") < 1) throw new BadRequestError("Out of stock: " + product.getString("name"));
  e.record.set("price", product.getInt("price"));
  e.next();
}, "orders");

// Not straight-line (a save): in a worker. Its save runs the receipts' handler inside this write.
onRecordAfterCreateSuccess((e) => {
  const receipt = new Record($app.findCollectionByNameOrId("receipts"));
  receipt.set("order", e.record.id);
  $app.save(receipt);
  e.next();
}, "orders");

// Straight-line, reading by filter: a nickname taken, the team by its code.
onRecordCreate((e) => {
  const taken = $app.findRecordsByFilter("members", "nick = {:nick}", "", 1, 0, { nick: e.record.getString("nick") });
  if (taken.length > 0) throw new BadRequestError("Nick taken: " + e.record.getString("nick"));
  const team = $app.findFirstRecordByFilter("teams", "code = {:code}", { code: e.record.getString("team") });
  e.record.set("teamName", team.getString("name"));
  e.next();
}, "members");

// Straight-line again, reading the order its own transaction wrote.
onRecordCreate((e) => {
  const order = $app.findRecordById("orders", e.record.getString("order"));
  e.record.set("amount", order.getInt("price"));
  e.next();
}, "receipts");
`;

describe('pb_hooks: straight-line handlers tried on the main thread', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;
  let apple: string;
  let pear: string;

  before(async () => {
    pb = pbDir({ 'shop.pb.js': HOOKS });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
    await createCollection(server, { name: 'products', fields: [{ name: 'name', type: 'text' }, { name: 'price', type: 'number' }, { name: 'stock', type: 'number' }] });
    await createCollection(server, { name: 'orders', fields: [{ name: 'product', type: 'text' }, { name: 'price', type: 'number' }] });
    await createCollection(server, { name: 'receipts', fields: [{ name: 'order', type: 'text' }, { name: 'amount', type: 'number' }] });
    await createCollection(server, { name: 'teams', fields: [{ name: 'code', type: 'text' }, { name: 'name', type: 'text' }] });
    await createCollection(server, { name: 'members', fields: [{ name: 'nick', type: 'text' }, { name: 'team', type: 'text' }, { name: 'teamName', type: 'text' }] });
    await server.admin('POST', '/api/collections/teams/records', { body: { code: 'red', name: 'Red Team' } });
    apple = (await server.admin('POST', '/api/collections/products/records', { body: { name: 'apple', price: 3, stock: 5 } })).body.id;
    pear = (await server.admin('POST', '/api/collections/products/records', { body: { name: 'pear', price: 4, stock: 0 } })).body.id;
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  test('a handler reads a record by id and changes the record before e.next()', async () => {
    for (let i = 0; i < 20; i++) {
      const res = await server.admin('POST', '/api/collections/orders/records', { body: { product: apple } });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.price, 3);
    }
  });

  test('its throw answers, and nothing is saved', async () => {
    const res = await server.admin('POST', '/api/collections/orders/records', { body: { product: pear } });
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.message, 'Out of stock: pear');
    const list = await server.admin('GET', `/api/collections/orders/records?filter=${encodeURIComponent(`product = "${pear}"`)}`);
    assert.equal(list.body.totalItems, 0);
  });

  test('a record that is not there answers as in a worker: 404, nothing saved', async () => {
    const res = await server.admin('POST', '/api/collections/orders/records', { body: { product: 'nosuchproduct00' } });
    assert.equal(res.status, 404, res.text);
    const list = await server.admin('GET', `/api/collections/orders/records?filter=${encodeURIComponent('product = "nosuchproduct00"')}`);
    assert.equal(list.body.totalItems, 0);
  });

  test('reads by filter: a match changes the record, a list found refuses, nothing found answers as a worker does', async () => {
    const ok = await server.admin('POST', '/api/collections/members/records', { body: { nick: 'ada', team: 'red' } });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.teamName, 'Red Team');
    const taken = await server.admin('POST', '/api/collections/members/records', { body: { nick: 'ada', team: 'red' } });
    assert.equal(taken.status, 400, taken.text);
    assert.equal(taken.body.message, 'Nick taken: ada');
    const noTeam = await server.admin('POST', '/api/collections/members/records', { body: { nick: 'bob', team: 'blue' } });
    assert.equal(noTeam.status, 404, noTeam.text);
    const list = await server.admin('GET', '/api/collections/members/records');
    assert.deepEqual(list.body.items.map((r: { nick: string }) => r.nick), ['ada']);
  });

  test("a handler of a save made by another handler reads what the write's transaction holds", async () => {
    const order = await server.admin('POST', '/api/collections/orders/records', { body: { product: apple } });
    assert.equal(order.status, 200, order.text);
    const receipts = await server.admin('GET', `/api/collections/receipts/records?filter=${encodeURIComponent(`order = "${order.body.id}"`)}`);
    assert.equal(receipts.body.totalItems, 1, receipts.text);
    assert.equal(receipts.body.items[0].amount, 3);
  });
});
