import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { startServer, type TestServer } from '../helpers/server.ts';

/** A build folder shaped like Vite's output, so these checks do not depend on the real build. */
function fakeBuild(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-dist-'));
  mkdirSync(path.join(dir, 'assets'));
  writeFileSync(path.join(dir, 'index.html'), `<!doctype html><html><head><script type="module" src="/_/assets/index-abc123.js"></script></head><body>${'<p>console</p>'.repeat(50)}</body></html>`);
  writeFileSync(path.join(dir, 'assets', 'index-abc123.js'), `console.log(${JSON.stringify('x'.repeat(2000))});`);
  writeFileSync(path.join(dir, 'assets', 'index-abc123.css'), 'body{color:red}');
  writeFileSync(path.join(dir, '.secret'), 'hidden');
  return dir;
}

describe('the dashboard is served at /_/', () => {
  let server: TestServer;
  let dist: string;
  before(async () => {
    dist = fakeBuild();
    server = await startServer({ env: { CAIRN_DASHBOARD_DIR: dist } });
  });
  after(async () => {
    await server.close();
    rmSync(dist, { recursive: true, force: true });
  });

  const get = (p: string, headers: Record<string, string> = {}) => fetch(server.url + p, { headers, redirect: 'manual' });

  test('/ and /_ redirect to /_/', async () => {
    for (const p of ['/', '/_']) {
      const res = await get(p);
      assert.equal(res.status, 302, p);
      assert.equal(res.headers.get('location'), '/_/');
    }
  });

  test('index.html: HTML, revalidated, with a CSP that refuses framing and foreign scripts', async () => {
    const res = await get('/_/');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'text/html; charset=utf-8');
    assert.equal(res.headers.get('cache-control'), 'no-cache');
    assert.match(res.headers.get('content-security-policy') ?? '', /script-src 'self'.*frame-ancestors 'none'/);
    assert.equal(res.headers.get('x-frame-options'), 'DENY');
    assert.match(await res.text(), /index-abc123\.js/);
    const again = await get('/_/', { 'if-none-match': res.headers.get('etag')! });
    assert.equal(again.status, 304);
  });

  test('hashed assets: their content type, cached for good, gzip when accepted', async () => {
    const js = await get('/_/assets/index-abc123.js', { 'accept-encoding': 'gzip' });
    assert.equal(js.status, 200);
    assert.equal(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
    assert.equal(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    // fetch undoes the encoding itself; the raw answer is checked below with a plain request.
    assert.match(await js.text(), /^console\.log/);
    const raw = await new Promise<{ encoding?: string; body: Buffer }>((resolve, reject) => {
      import('node:http').then(({ get: httpGet }) =>
        httpGet(`${server.url}/_/assets/index-abc123.js`, { headers: { 'accept-encoding': 'gzip' } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c)).on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        }).on('error', reject),
      );
    });
    assert.equal(raw.encoding, 'gzip');
    assert.match(gunzipSync(raw.body).toString(), /^console\.log/);
    assert.equal((await get('/_/assets/index-abc123.css')).headers.get('content-type'), 'text/css; charset=utf-8');
  });

  test("the app's own routes fall back to index.html; missing files and escapes are 404s", async () => {
    const page = await get('/_/collections/posts');
    assert.equal(page.status, 200);
    assert.match(await page.text(), /index-abc123\.js/);
    for (const p of ['/_/assets/gone-123.js', '/_/favicon.ico', '/_/.secret', '/_/%2e%2e/package.json', '/_/..%2f..%2fpackage.json', '/_/assets/%00x.js', '/_/a%5c..%5c..%5cpackage.json']) {
      const res = await get(p);
      assert.equal(res.status, 404, p);
      const body = await res.json();
      assert.deepEqual(Object.keys(body).sort(), ['code', 'data', 'message', 'status'], p);
    }
  });

  test('a stale or forged token does not get in the way of the static files', async () => {
    const res = await get('/_/', { authorization: 'Bearer not-a-token' });
    assert.equal(res.status, 200);
  });
});

describe('without a build, /_/ says how to make one', () => {
  let server: TestServer;
  let empty: string;
  before(async () => {
    empty = mkdtempSync(path.join(tmpdir(), 'cairn-nodist-'));
    server = await startServer({ env: { CAIRN_DASHBOARD_DIR: empty } });
  });
  after(async () => {
    await server.close();
    rmSync(empty, { recursive: true, force: true });
  });

  test('a 404 naming the command, not a 500', async () => {
    const res = await server.request('GET', '/_/');
    assert.equal(res.status, 404);
    assert.match(res.body.message, /not built.*npm install/);
    assert.equal((await server.request('GET', '/api/health')).status, 200, 'the API works without the dashboard');
  });
});
