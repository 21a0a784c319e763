import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// A small shop front: pages rendered from Go templates, data read and written with dbx's builders.
const LAYOUT = `<!doctype html>
<title>{{block "title" .}}Shop{{end}}</title>
<main>{{template "content" .}}</main>
`;
const PAGE = `{{define "title"}}{{.shop}} — products{{end}}
{{define "content"}}
  {{- range $i, $p := .products}}
  <li class="{{if $p.onSale}}sale{{else if gt $p.price 100.0}}dear{{else}}plain{{end}}">{{$i}}. {{$p.title}} {{printf "%.2f" $p.price}}</li>
  {{- else}}
  <p>Nothing yet</p>
  {{- end}}
  {{with .note}}<aside>{{.}}</aside>{{end}}{{raw .banner}}
{{end}}`;

const SHOP = `
routerAdd("GET", "/shop", (e) => {
  const rows = arrayOf(new DynamicModel({ title: "", price: 0, onSale: false }));
  $app.db()
    .select("p.title", "p.price", "p.onSale")
    .from("products p")
    .where($dbx.hashExp({ "p.hidden": false }))
    .andWhere($dbx.not($dbx.like("p.title", "secret")))
    .orderBy("p.price DESC", "p.title")
    .limit(10)
    .all(rows);
  const html = $template.loadFiles(__hooks + "/views/layout.html", __hooks + "/views/page.html")
    .render({ shop: e.request.url.query().get("shop") || "Acme", products: rows, note: "<b>new</b>", banner: "<hr>" });
  return e.html(200, html);
});

routerAdd("GET", "/shop/counts", (e) => {
  const cheap = $app.findRecordsByExpr("products", $dbx.exp("price < {:max}", { max: 100 }), $dbx.hashExp({ hidden: false }));
  return e.json(200, {
    all: $app.countRecords("products"),
    onSale: $app.countRecords("products", $dbx.hashExp({ onSale: true })),
    cheap: cheap.map((r) => r.getString("title")),
  });
});

routerAdd("GET", "/shop/empty", (e) => {
  return e.html(200, $template.loadString('{{range .xs}}x{{else}}none{{end}}|{{len .xs}}|{{if and .a (not .b)}}yes{{end}}|{{.a | printf "%q"}}').render({ xs: [], a: "z", b: false }));
});

routerAdd("GET", "/shop/broken", (e) => {
  return e.html(200, $template.loadString("{{if .a}}open").render({ a: 1 }));
});

routerAdd("POST", "/shop/restock", (e) => {
  const db = $app.db();
  db.newQuery("CREATE TABLE stock_log (what TEXT, n INTEGER)").execute();
  db.insert("stock_log", { what: "restock", n: 3 }).execute();
  db.insert("stock_log", { what: "sale", n: 1 }).execute();
  db.insert("stock_log", { what: "sale", n: 2 }).execute();
  db.update("stock_log", { n: 20 }, $dbx.hashExp({ what: "sale", n: 2 })).execute();
  db.delete("stock_log", $dbx.and($dbx.exp("n < {:max}", { max: 2 }), $dbx.in("what", "sale", "other"))).execute();
  const rows = arrayOf(new DynamicModel({ what: "", n: 0 }));
  db.select("what", "n").from("stock_log").where($dbx.or($dbx.between("n", 10, 30), $dbx.hashExp({ what: "restock" }))).orderBy("n").all(rows);
  const one = new DynamicModel({ total: 0 });
  db.select("SUM(n) AS total").from("stock_log").where($dbx.notIn("what", "nothing")).one(one);
  let missing = "";
  try {
    db.select("what").from("stock_log").where($dbx.hashExp({ what: "none" })).one(new DynamicModel({ what: "" }));
  } catch (err) {
    missing = String(err.message || err);
  }
  db.truncateTable("stock_log").execute();
  const left = new DynamicModel({ n: -1 });
  db.select("COUNT(*) AS n").from("stock_log").one(left);
  return e.json(200, { rows, total: one.total, missing, left: left.n });
});

routerAdd("GET", "/shop/nullable", (e) => {
  const row = new DynamicModel({
    s: nullString(), snull: nullString(), i: nullInt(), inull: nullInt(), f: nullFloat(), b: nullBool(), bnull: nullBool(),
    a: nullArray(), o: nullObject(), onull: nullObject(), plain: "",
  });
  $app.db().newQuery("SELECT 'x' AS s, NULL AS snull, 2 AS i, NULL AS inull, 1.5 AS f, 1 AS b, NULL AS bnull, '[1,2]' AS a, '{\\"k\\":1}' AS o, NULL AS onull, NULL AS plain").one(row);
  const rows = arrayOf(new DynamicModel({ title: "", note: nullString() }));
  $app.db().newQuery("SELECT title, NULL AS note FROM products ORDER BY title LIMIT 1").all(rows);
  return e.json(200, { row, rows });
});
`;

describe('pb_hooks: $template (Go templates) and $app.db() query builders', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    pb = pbDir({ 'shop.pb.js': SHOP, 'views/layout.html': LAYOUT, 'views/page.html': PAGE });
    // Errors logged: a handler's failure (a 400 without its detail) shows its cause in the test's output.
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir, CAIRN_LOG_LEVEL: 'error' } });
    await createCollection(server, {
      name: 'products',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'price', type: 'number' },
        { name: 'onSale', type: 'bool' },
        { name: 'hidden', type: 'bool' },
      ],
    });
    for (const p of [
      { title: 'Kettle & Co', price: 30, onSale: true },
      { title: 'Lamp', price: 120 },
      { title: 'Mug', price: 8 },
      { title: 'secret stash', price: 999 },
      { title: 'Gone', price: 50, hidden: true },
    ]) {
      const res = await server.admin('POST', '/api/collections/products/records', { body: p });
      assert.equal(res.status, 200, res.text);
    }
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  test('a layout and a page: block, define, template, range with else if, printf, with, raw, escaping', async () => {
    const res = await server.request('GET', '/shop?shop=Bob%27s');
    assert.equal(res.status, 200, res.text);
    assert.match(String(res.headers.get('content-type')), /^text\/html/);
    const html = res.text;
    assert.match(html, /<title>Bob&#39;s — products<\/title>/);
    const items = [...html.matchAll(/<li class="(\w+)">([^<]*)<\/li>/g)].map((m) => [m[1], m[2]]);
    assert.deepEqual(items, [
      ['dear', '0. Lamp 120.00'],
      ['sale', '1. Kettle &amp; Co 30.00'],
      ['plain', '2. Mug 8.00'],
    ]);
    assert.match(html, /<aside>&lt;b&gt;new&lt;\/b&gt;<\/aside><hr>/);
    assert.doesNotMatch(html, /Nothing yet/);
  });

  test('loadString: range else, len, and/not, pipelines; a template that does not parse is a 400', async () => {
    const res = await server.request('GET', '/shop/empty');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, 'none|0|yes|&#34;z&#34;');
    const broken = await server.request('GET', '/shop/broken');
    assert.equal(broken.status, 400, broken.text);
  });

  test('countRecords and findRecordsByExpr take $dbx expressions', async () => {
    const res = await server.request('GET', '/shop/counts');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body, { all: 5, onSale: 1, cheap: ['Kettle & Co', 'Mug'] });
  });

  test("nullString() and its kin read a NULL column as null, any other value as their type (PocketBase ≥ 0.35)", async () => {
    const res = await server.request('GET', '/shop/nullable');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.row, { s: 'x', snull: null, i: 2, inull: null, f: 1.5, b: true, bnull: null, a: [1, 2], o: { k: 1 }, onull: null, plain: '' });
    assert.deepEqual(res.body.rows, [{ title: 'Gone', note: null }]);
  });

  test('insert, update, delete and select with $dbx expressions on the instance engine', async () => {
    const res = await server.request('POST', '/shop/restock');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.rows, [
      { what: 'restock', n: 3 },
      { what: 'sale', n: 20 },
    ]);
    assert.equal(res.body.total, 23);
    assert.match(res.body.missing, /no rows/);
    assert.equal(res.body.left, 0, 'truncateTable emptied the table');
  });
});
