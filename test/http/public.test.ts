import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';

/**
 * An app folder as PocketBase serves it: pb_public/ with a single-page app, a docs folder and a
 * `.well-known` file, a secret beside it that no request may reach, and a console build of its own.
 */
function appFolder(): { root: string; publicDir: string; consoleDir: string; remove(): void } {
  const root = mkdtempSync(path.join(tmpdir(), 'cairn-public-'));
  const write = (rel: string, text: string) => {
    mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    writeFileSync(path.join(root, rel), text);
  };
  write('pb_public/index.html', '<!doctype html><title>orchard</title>');
  write('pb_public/app.js', 'console.log("orchard");');
  write('pb_public/docs/index.html', '<p>orchard docs</p>');
  write('pb_public/empty/readme.txt', 'a folder without an index');
  write('pb_public/.well-known/security.txt', 'Contact: mailto:sec@example.com');
  write('secret.txt', 'the secret beside the folder');
  write('console/index.html', '<!doctype html><title>the console</title>');
  return { root, publicDir: path.join(root, 'pb_public'), consoleDir: path.join(root, 'console'), remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** A GET whose path goes out exactly as written (fetch would resolve `..` itself). */
function rawGet(base: string, rawPath: string): Promise<{ status: number; body: string; location?: string }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: rawPath, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, location: res.headers.location }));
    });
    req.on('error', reject);
    req.end();
  });
}

const ESCAPES = ['/..%2fsecret.txt', '/%2e%2e/secret.txt', '/docs/..%2f..%2fsecret.txt', '/%2e%2e%2f%2e%2e%2fsecret.txt', '/..%5csecret.txt', '/secret.txt%00'];

describe('pb_public served at / with the index fallback (PocketBase\'s default)', () => {
  let server: TestServer;
  let app: ReturnType<typeof appFolder>;

  before(async () => {
    app = appFolder();
    server = await startServer({ env: { CAIRN_PUBLIC_DIR: app.publicDir, CAIRN_DASHBOARD_DIR: app.consoleDir } });
  });
  after(async () => {
    await server?.close();
    app?.remove();
  });

  test('/ is the folder\'s index.html; files keep their content type', async () => {
    const home = await fetch(`${server.url}/`, { redirect: 'manual' });
    assert.equal(home.status, 200);
    assert.match(home.headers.get('content-type') ?? '', /^text\/html/);
    assert.match(await home.text(), /<title>orchard<\/title>/);
    const js = await fetch(`${server.url}/app.js?v=3`);
    assert.equal(js.status, 200);
    assert.match(js.headers.get('content-type') ?? '', /^text\/javascript/);
    assert.equal(await js.text(), 'console.log("orchard");');
    const wellKnown = await fetch(`${server.url}/.well-known/security.txt`);
    assert.equal(wellKnown.status, 200);
    assert.match(await wellKnown.text(), /Contact:/);
  });

  test('a folder redirects to its trailing slash and serves its index.html; canonical paths as PocketBase', async () => {
    const bare = await fetch(`${server.url}/docs`, { redirect: 'manual' });
    assert.equal(bare.status, 301);
    assert.equal(bare.headers.get('location'), '/docs/');
    const docs = await fetch(`${server.url}/docs/`);
    assert.equal(docs.status, 200);
    assert.equal(await docs.text(), '<p>orchard docs</p>');
    const index = await fetch(`${server.url}/docs/index.html`, { redirect: 'manual' });
    assert.equal(index.status, 301);
    assert.equal(index.headers.get('location'), '/docs/');
    const slashed = await fetch(`${server.url}/app.js/`, { redirect: 'manual' });
    assert.equal(slashed.status, 301);
    assert.equal(slashed.headers.get('location'), '/app.js');
    // A redirect never leads to another host, whatever the path starts with.
    for (const p of ['//docs', '///docs']) {
      const sneaky = await rawGet(server.url, p);
      assert.equal(sneaky.status, 301, p);
      assert.equal(sneaky.location, '/docs/', p);
    }
  });

  test('a single-page app\'s deep links (and a folder without index) answer its index.html', async () => {
    for (const link of ['/orders/42', '/settings/profile/', '/empty/']) {
      const res = await fetch(`${server.url}${link}`);
      assert.equal(res.status, 200, link);
      assert.match(await res.text(), /<title>orchard<\/title>/, link);
    }
  });

  test('a path that tries to leave the folder never reaches what is beside it', async () => {
    for (const p of ESCAPES) {
      const res = await rawGet(server.url, p);
      assert.doesNotMatch(res.body, /the secret beside the folder/, p);
      assert.ok(res.status === 200 || res.status === 400 || res.status === 404, `${p}: ${res.status}`);
    }
  });

  test('the API and the console stay Cairn\'s', async () => {
    const api = await server.request('GET', '/api/no-such-endpoint');
    assert.equal(api.status, 404);
    assert.equal(api.body.message, "The requested resource wasn't found.");
    const health = await server.request('GET', '/api/health');
    assert.equal(health.status, 200);
    const console = await fetch(`${server.url}/_/`);
    assert.match(await console.text(), /the console/);
    const post = await server.request('POST', '/orders/42');
    assert.equal(post.status, 404);
  });

  test('HEAD, conditional and range requests', async () => {
    const head = await fetch(`${server.url}/app.js`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(head.headers.get('content-length'), String('console.log("orchard");'.length));
    assert.equal(await head.text(), '');
    const etag = head.headers.get('etag')!;
    const again = await fetch(`${server.url}/app.js`, { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    const part = await fetch(`${server.url}/app.js`, { headers: { range: 'bytes=0-6' } });
    assert.equal(part.status, 206);
    assert.equal(await part.text(), 'console');
  });
});

describe('pb_public without the index fallback, and without a folder', () => {
  test('missing paths and escapes are 404s; / without a folder is the console\'s redirect', async () => {
    const app = appFolder();
    const server = await startServer({ env: { CAIRN_PUBLIC_DIR: app.publicDir, CAIRN_INDEX_FALLBACK: 'off' } });
    try {
      assert.equal((await fetch(`${server.url}/orders/42`)).status, 404);
      assert.equal((await fetch(`${server.url}/empty/`)).status, 404);
      for (const p of ESCAPES) {
        const res = await rawGet(server.url, p);
        assert.ok(res.status === 404 || res.status === 400, `${p}: ${res.status}`);
        assert.doesNotMatch(res.body, /the secret/, p);
      }
      assert.equal((await fetch(`${server.url}/`)).status, 200);
    } finally {
      await server.close();
    }
    const bare = await startServer({ env: { CAIRN_PUBLIC_DIR: path.join(app.root, 'no-such-folder') } });
    try {
      const home = await fetch(`${bare.url}/`, { redirect: 'manual' });
      assert.equal(home.status, 302);
      assert.equal(home.headers.get('location'), '/_/');
      assert.equal((await fetch(`${bare.url}/orders/42`)).status, 404);
    } finally {
      await bare.close();
      app.remove();
    }
  });
});

describe('pb_public beside pb_hooks routes', () => {
  test('a hook route wins over a file; what no route matches is the folder\'s', async () => {
    const app = appFolder();
    mkdirSync(path.join(app.root, 'pb_hooks'));
    writeFileSync(
      path.join(app.root, 'pb_hooks', 'main.pb.js'),
      'routerAdd("GET", "/app.js", (e) => e.string(200, "from the hook"));\nrouterAdd("GET", "/", (e) => e.html(200, "<h1>hook home</h1>"));\n',
    );
    const server = await startServer({ env: { CAIRN_PUBLIC_DIR: app.publicDir, CAIRN_PB_HOOKS_DIR: path.join(app.root, 'pb_hooks') } });
    try {
      assert.equal(await (await fetch(`${server.url}/app.js`)).text(), 'from the hook');
      assert.match(await (await fetch(`${server.url}/`)).text(), /hook home/);
      assert.equal(await (await fetch(`${server.url}/docs/`)).text(), '<p>orchard docs</p>');
      assert.match(await (await fetch(`${server.url}/orders/7`)).text(), /<title>orchard<\/title>/);
      assert.equal((await server.request('DELETE', '/docs/')).status, 404);
    } finally {
      await server.close();
      app.remove();
    }
  });
});
