import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * A PocketBase app laid out as PocketBase serves it: pb_hooks/ beside pb_public/ (the single-page
 * app a catch-all route serves), a secret beside both that no request may reach, and a console build
 * of its own so `/_/` can be told apart from the app.
 */
function appDir(hooks: string): { root: string; hooksDir: string; consoleDir: string; remove(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'cairn-pbstatic-'));
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  };
  write('pb_hooks/main.pb.js', hooks);
  write('pb_public/index.html', '<!doctype html><title>shelf</title><div id="app"></div>');
  write('pb_public/assets/app.js', 'console.log("shelf");');
  write('pb_public/assets/site.css', 'body { color: teal }');
  write('pb_public/docs/index.html', '<p>the docs page</p>');
  write('secret.txt', 'not for the web');
  write('console/index.html', '<!doctype html><title>the console</title>');
  return { root, hooksDir: path.join(root, 'pb_hooks'), consoleDir: path.join(root, 'console'), remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** A GET whose path goes out exactly as written (fetch would resolve the `..`). */
function rawGet(base: string, rawPath: string): Promise<{ status: number; body: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: rawPath, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

// ≥ 0.23: a catch-all serving the built front end, deep links falling back to its index.html.
const SPA = `
routerAdd("GET", "/{path...}", $apis.static(\`\${__hooks}/../pb_public\`, true));
routerAdd("GET", "/api/shelf/{name}", (e) => e.json(200, { shelf: e.request.pathValue("name") }));
routerAdd("GET", "/api/health", (e) => e.json(200, { mine: true }));
`;

// v0.22: an own home page, and the public folder without the index fallback.
const LEGACY = `
routerAdd("GET", "/", (c) => c.html(200, "<h1>welcome home</h1>"));
routerAdd("GET", "/*", $apis.staticDirectoryHandler($os.dirFS(__hooks + "/../pb_public"), false));
`;

describe('pb_hooks static files: a catch-all serving pb_public (>= 0.23, index fallback)', () => {
  let server: TestServer;
  let app: ReturnType<typeof appDir>;

  before(async () => {
    app = appDir(SPA);
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: app.hooksDir, CAIRN_DASHBOARD_DIR: app.consoleDir } });
  });
  after(async () => {
    await server?.close();
    app?.remove();
  });

  test('/ is the app, not the redirect to the console', async () => {
    const res = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await res.text(), /<title>shelf<\/title>/);
  });

  test('files are sent with their content type; a folder answers with its index.html', async () => {
    const js = await fetch(`${server.url}/assets/app.js`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.equal(await js.text(), 'console.log("shelf");');
    const css = await fetch(`${server.url}/assets/site.css`);
    assert.match(css.headers.get('content-type') ?? '', /^text\/css/);
    assert.equal(await css.text(), 'body { color: teal }');
    const docs = await fetch(`${server.url}/docs/`);
    assert.equal(await docs.text(), '<p>the docs page</p>');
    const head = await fetch(`${server.url}/assets/app.js`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String('console.log("shelf");'.length));
  });

  test('a deep link of the front end falls back to index.html', async () => {
    const res = await fetch(`${server.url}/books/42/edit?tab=notes`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<title>shelf<\/title>/);
  });

  test("the app's other routes and Cairn's own routes still answer; a concrete path Cairn serves stays Cairn's", async () => {
    const shelf = await server.request('GET', '/api/shelf/novels');
    assert.deepEqual(shelf.body, { shelf: 'novels' });
    const health = await server.request('GET', '/api/health');
    assert.equal(health.status, 200);
    assert.notEqual(health.body.mine, true);
    const collections = await server.admin('GET', '/api/collections');
    assert.equal(collections.status, 200);
  });

  test('/_/ is still the console', async () => {
    const res = await fetch(`${server.url}/_/`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<title>the console<\/title>/);
  });

  test('no path leaves pb_public, however it is spelled', async () => {
    for (const p of ['/../secret.txt', '/assets/../../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/..%5csecret.txt']) {
      const res = await rawGet(server.url, p);
      assert.doesNotMatch(res.body, /not for the web/, p);
      assert.ok(res.status === 404 || res.status === 400, `${p}: ${res.status}`);
    }
  });
});

describe('pb_hooks static files: v0.22 staticDirectoryHandler without fallback, and an own GET /', () => {
  let server: TestServer;
  let app: ReturnType<typeof appDir>;

  before(async () => {
    app = appDir(LEGACY);
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: app.hooksDir, CAIRN_DASHBOARD_DIR: app.consoleDir } });
  });
  after(async () => {
    await server?.close();
    app?.remove();
  });

  test("GET / is the app's page", async () => {
    const res = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(res.status, 200);
    assert.equal(await res.text(), '<h1>welcome home</h1>');
  });

  test('files are served; a missing one is a 404 in the error shape', async () => {
    const js = await fetch(`${server.url}/assets/app.js`);
    assert.equal(js.status, 200);
    assert.equal(await js.text(), 'console.log("shelf");');
    const missing = await fetch(`${server.url}/books/42`);
    assert.equal(missing.status, 404);
    assert.deepEqual(await missing.json(), { status: 404, code: 404, message: "The requested resource wasn't found.", data: {} });
  });

  test('/_/ is still the console', async () => {
    const res = await fetch(`${server.url}/_/`);
    assert.equal(res.status, 200);
    assert.match(await res.text(), /<title>the console<\/title>/);
  });
});
