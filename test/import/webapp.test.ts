import assert from 'node:assert/strict';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { launchBrowser, type TestBrowser } from '../dashboard/browser.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { PB_APPS } from './pb-fixtures.ts';

/**
 * A small web app written against PocketBase's SDK (test/import/webapp), run unmodified in Chromium
 * against data imported from two real PocketBase applications: on the 0.23+ one (SDK 0.28) people
 * sign up with the app's own `role` "pending", an administrator of the app (a user whose role is
 * "admin") approves them (`PATCH {role: "user"}`, as the collection's update rule allows), and
 * whoever is signed in shows as online through presence records that carry their email; on the one
 * from before 0.23 (SDK 0.21) people sign up with a username and sign in with it.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const APP = path.join(ROOT, 'test/import/webapp');
const SDKS: Record<string, string> = {
  '028': path.join(ROOT, 'node_modules/pocketbase-0.28/dist/pocketbase.umd.js'),
  '021': path.join(ROOT, 'node_modules/pocketbase/dist/pocketbase.umd.js'),
};
const PASSWORD = 'crew-password-1';

/** Serves the app under /028/ and /021/, each with its SDK as sdk.js. */
function serveApp(): Promise<Server> {
  const server = createServer((req, res) => {
    const [, version, file] = /^\/(\d{3})\/([a-z.]*)/.exec(new URL(req.url ?? '/', 'http://x').pathname) ?? [];
    const target = !SDKS[version] ? undefined : file === 'sdk.js' ? SDKS[version] : file === 'app.js' ? path.join(APP, 'app.js') : file === '' || file === 'index.html' ? path.join(APP, 'index.html') : undefined;
    if (!target) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': target.endsWith('.html') ? 'text/html' : 'text/javascript' }).end(readFileSync(target));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe('a PocketBase web app, unmodified, in Chromium against imported data', () => {
  let dir: string;
  let server: TestServer;
  let web: Server;
  let browser: TestBrowser;
  let appUrl: string;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-webapp-'));
    assert.equal((await runCli(['admin', 'create', ADMIN_EMAIL, ADMIN_PASSWORD, '--dir', dir])).code, 0);
    for (const [file, db] of [['pb-current-collector.db', 'crew'], ['pb-legacy-todo.db', 'todo']]) {
      const res = await runCli(['import', 'pocketbase', path.join(PB_APPS, file), '--db', db, '--dir', dir], {}, 120_000);
      assert.equal(res.code, 0, res.stderr);
    }
    server = await startServer({ dir });
    // The app's administrator and a user of the old app, with passwords this test knows (the
    // fixtures' are random): set as PocketBase's superuser would set them.
    for (const [db, id] of [['crew', '94govwz4289opke'], ['todo', 'qpywjn8n4dgrqvx']]) {
      const set = await server.admin('PATCH', `/api/collections/users/records/${id}`, { db, body: { password: PASSWORD, passwordConfirm: PASSWORD } });
      assert.equal(set.status, 200, set.text);
    }
    web = await serveApp();
    appUrl = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    web?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  async function signIn(identity: string, password = PASSWORD) {
    const { page } = browser;
    await page.fill('#signin-form input[name=identity]', identity);
    await page.fill('#signin-form input[name=password]', password);
    await page.click('#signin-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('status')!.textContent !== 'Signed out');
  }

  test('SDK 0.28: sign-up with role "pending", approval by the app\'s administrator, presence with emails', async () => {
    const { page, errors } = browser;
    await page.goto(`${appUrl}/028/?api=${encodeURIComponent(server.url)}&db=crew&presence=1`);
    await page.fill('#signup-form input[name=email]', 'newcomer@example.com');
    await page.fill('#signup-form input[name=name]', 'Newcomer');
    await page.fill('#signup-form input[name=password]', PASSWORD);
    await page.click('#signup-form button[type=submit]');
    await page.waitForSelector('#signup-result:has-text("Welcome")');
    assert.equal(await page.textContent('#signup-result'), 'Welcome Newcomer: your role is pending');

    await signIn('newcomer@example.com');
    assert.equal(await page.textContent('#status'), 'Signed in as newcomer@example.com (pending)');
    await page.waitForSelector('#presence li');
    assert.deepEqual(await page.$$eval('#presence li', (items) => items.map((i) => i.textContent)), ['newcomer@example.com']);

    await page.click('#signout');
    await signIn('users-1@example.com');
    assert.equal(await page.textContent('#status'), 'Signed in as users-1@example.com (admin)');
    await page.waitForSelector('#pending li', { timeout: 5000 }).catch(async () => assert.fail(`no one to approve: ${await page.innerHTML('body')} ${errors.join(' | ')}`));
    await page.click('button:has-text("Approve Newcomer")');
    await page.waitForFunction(() => document.querySelectorAll('#pending li').length === 0);
    await page.waitForFunction(() => document.querySelectorAll('#presence li').length === 2);
    assert.deepEqual((await page.$$eval('#presence li', (items) => items.map((i) => i.textContent))).sort(), ['newcomer@example.com', 'users-1@example.com']);

    const newcomer = (await server.admin('GET', '/api/collections/users/records?filter=email%3D%22newcomer%40example.com%22', { db: 'crew' })).body.items[0];
    assert.equal(newcomer.role, 'user', 'approved');
    const presence = await server.admin('GET', `/api/collections/presence/records/${newcomer.id}`, { db: 'crew' });
    assert.equal(presence.body.email, 'newcomer@example.com', 'the presence record keeps the email the app wrote');
    assert.deepEqual(errors, []);
  });

  test('SDK 0.21: sign-up with a username, and sign-in with it (the app allowed username sign-in)', async () => {
    const { page, errors } = browser;
    // Another app on another origin would not see the first one's session; here they share one.
    await page.evaluate(() => localStorage.clear());
    await page.goto(`${appUrl}/021/?api=${encodeURIComponent(server.url)}&db=todo`);
    await page.fill('#signup-form input[name=email]', 'caro@example.com');
    await page.fill('#signup-form input[name=username]', 'caro_dev');
    await page.fill('#signup-form input[name=password]', PASSWORD);
    await page.click('#signup-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('signup-result')!.textContent !== '');
    assert.equal(await page.textContent('#signup-result'), 'Welcome caro_dev: you can sign in');
    await signIn('caro_dev');
    assert.equal(await page.textContent('#status'), 'Signed in as caro@example.com (member)');
    await page.click('#signout');
    await signIn('AliceDev');
    assert.equal(await page.textContent('#status'), 'Signed in as users-1@example.com (member)', 'an imported account signs in with its PocketBase username');
    assert.deepEqual(errors, []);
  });
});
