import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, beforeEach, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { deflateSync } from 'node:zlib';
import * as zlib from 'node:zlib';
import type { Locator, Page } from 'playwright-core';
import { onPostgres } from '../helpers/postgres.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { type AppDir, appDir } from '../hooks/app-dir.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';
import { axeViolations, dialogsOffScreen, launchBrowser, setView, sidewaysOverflow, type TestBrowser, unnamedControls, type View } from './browser.ts';

const run = promisify(execFile);
const EMAIL = 'owner@example.com';
const PASSWORD = 'owner-password-1';
const DIST = path.resolve('dashboard/dist/index.html');
const WIDE: View = { width: 1360, height: 860, theme: 'light' };
const PHONE: View = { width: 390, height: 844, theme: 'light' };
/** Every screen is looked at in these: both widths, both themes (ordered to switch one thing at a time). */
const VIEWS: View[] = [WIDE, { ...WIDE, theme: 'dark' }, { ...PHONE, theme: 'dark' }, PHONE];
/** A small phone: the page must not scroll sideways there either. */
const NARROWEST: View = { width: 360, height: 740, theme: 'light' };

/** A real 8x8 PNG (a teal square), so the preview can be checked to have decoded. */
function png(): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type), data]);
    const len = Buffer.alloc(4);
    len.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE((zlib as unknown as { crc32(b: Buffer): number }).crc32(body) >>> 0);
    return Buffer.concat([len, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(8, 0);
  header.writeUInt32BE(8, 4);
  header.set([8, 2, 0, 0, 0], 8);
  const rows = Buffer.concat(Array.from({ length: 8 }, () => Buffer.from([0, ...Array.from({ length: 8 }, () => [15, 118, 110]).flat()])));
  return Buffer.concat([Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]), chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]);
}

/** An HTTP request from outside the browser, as a service would make it, with curl. */
async function curl(url: string, token: string): Promise<{ status: number; body: any }> {
  const { stdout } = await run('curl', ['-s', '-w', '\n%{http_code}', '-H', `Authorization: Bearer ${token}`, url]);
  const lines = stdout.trimEnd().split('\n');
  const status = Number(lines.pop());
  return { status, body: JSON.parse(lines.join('\n') || 'null') };
}

/** The text of the error tied to a control by aria-describedby (what a screen reader reads with it). */
async function describedError(page: Page, label: string): Promise<string> {
  const control = page.getByLabel(label, { exact: true });
  await waitFor(async () => (await control.getAttribute('aria-invalid')) === 'true', { what: `an error on "${label}"` });
  const id = await control.getAttribute('aria-describedby');
  assert.ok(id, `"${label}" is described by its error`);
  return (await page.locator(`[id="${id}"]`).innerText()).trim();
}

describe('the dashboard in a real browser', () => {
  let server: TestServer;
  let hooks: AppDir;
  let receiver: Receiver;
  let inbox: Inbox;
  let b: TestBrowser;
  let page: Page;
  const unnamed: string[] = [];
  const problems: string[] = [];
  let keyValue = '';
  let adminToken = '';
  const admin = (method: string, urlPath: string, options: { body?: unknown } = {}) => server.request(method, urlPath, { ...options, token: adminToken });

  /**
   * Looks at the current screen in every view: records a page that scrolls sideways as a whole, an
   * open dialog that does not fit, an axe-core violation of impact serious or critical (rule and
   * element), and controls without an accessible name; then goes back to the wide light view (on
   * SQLite only).
   */
  const look = async (screen: string) => {
    // Layout and accessibility do not depend on the storage driver, and axe-core's checks at every
    // width and theme are most of this file's CPU: the SQLite pass makes them; the PostgreSQL pass
    // runs the same flows against PostgreSQL's data.
    if (onPostgres) return;
    for (const view of [...VIEWS, NARROWEST]) {
      await setView(page, view);
      const where = `${screen} (${view.width} px, ${view.theme})`;
      const overflow = await sidewaysOverflow(page);
      if (overflow) problems.push(`${where}: ${overflow}`);
      for (const dialog of await dialogsOffScreen(page)) problems.push(`${where}: ${dialog}`);
      if (view !== NARROWEST) for (const violation of await axeViolations(page)) problems.push(`${where}: ${violation}`);
    }
    await setView(page, WIDE);
    for (const html of await unnamedControls(page)) unnamed.push(`${screen}: ${html}`);
  };
  /** Presses Tab (or Shift+Tab) until `target` has the focus: how a keyboard user gets there. */
  const tabTo = async (target: Locator, backwards = false) => {
    for (let i = 0; i < 60; i++) {
      if ((await target.and(page.locator(':focus')).count()) === 1) return;
      await page.keyboard.press(backwards ? 'Shift+Tab' : 'Tab');
    }
    assert.fail(`the keyboard never reached ${target}`);
  };
  const nav = async (name: string, heading: string | RegExp = name) => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
    await page.getByRole('heading', { level: 1, name: heading }).waitFor();
  };

  before(async () => {
    assert.ok(existsSync(DIST), 'the dashboard is built (npm install does it; or npm run build:dashboard)');
    inbox = await startInbox();
    receiver = await startReceiver();
    hooks = appDir({
      'shop.ts': "export default (app: any) => {\n  app.onRecordCreate((e: any) => e.next(), 'posts');\n  app.routerAdd('GET', '/api/shop/report', (e: any) => e.json(200, {}));\n  app.cronAdd('nightly', '0 3 * * *', () => {});\n};\n",
    });
    server = await startServer({ noAdmin: true, env: { CAIRN_WEBHOOK_MAX_ATTEMPTS: '1', CAIRN_SMTP_URL: inbox.url, CAIRN_HOOKS_DIR: hooks.hooks } });
    b = await launchBrowser({ width: WIDE.width, height: WIDE.height });
    page = b.page;
    await b.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
  });
  // A dialog left open by a failed step would cover the page for the steps after it.
  beforeEach(async () => {
    for (let i = 0; i < 3 && page && (await page.locator('dialog[open]').count()) > 0; i++) await page.keyboard.press('Escape');
  });
  after(async () => {
    await b?.close();
    await server?.close();
    hooks?.remove();
    await receiver?.close();
    await inbox?.close();
  });

  test('set up the first administrator; the session is kept as the PocketBase SDK keeps it', async () => {
    await page.goto(`${server.url}/`);
    await page.getByRole('heading', { name: 'Create the first administrator' }).waitFor();
    await look('setup');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByLabel('Confirm password').fill(PASSWORD);
    await page.getByLabel('Confirm password').press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Collections' }).waitFor();
    assert.match(page.url(), /\/_\/#\/collections$/);
    const stored = JSON.parse((await page.evaluate('localStorage.getItem("pocketbase_auth")')) as string);
    assert.equal(stored.model.email, EMAIL);
    const me = await server.request('GET', '/api/admins/me', { token: stored.token });
    assert.equal(me.status, 200, me.text);
    adminToken = stored.token;
    await look('collections');
  });

  test('create a collection with a text, a relation and a file field', async () => {
    await page.getByRole('link', { name: 'New collection' }).first().click();
    await page.getByLabel('Collection name').fill('posts');
    await page.getByRole('group', { name: /^Field 1/ }).getByLabel('Name').fill('title');
    await page.getByLabel('New field type').selectOption('relation');
    await page.getByRole('button', { name: 'Add field' }).click();
    const relation = page.getByRole('group', { name: /^Field 2/ });
    await relation.getByLabel('Name').fill('author');
    await relation.getByLabel('Related collection').selectOption('users');
    const targets = await relation.getByLabel('Related collection').locator('option').allInnerTexts();
    assert.ok(targets.includes('users') && !targets.includes('_superusers'), `no relation to the administrators: ${targets}`);
    await page.getByLabel('New field type').selectOption('file');
    await page.getByRole('button', { name: 'Add field' }).click();
    const file = page.getByRole('group', { name: /^Field 3/ });
    await file.getByLabel('Name').fill('cover');
    await file.getByLabel('Allowed types').fill('image/png, image/jpeg');
    await look('collection editor');
    await page.getByRole('button', { name: 'Create collection' }).click();
    await page.getByRole('heading', { level: 1, name: 'posts' }).waitFor();
    const created = await admin('GET', '/api/collections/posts');
    assert.deepEqual(
      // v0.22's `schema`: the collection's own fields, each with its `options`.
      created.body.schema.map((f: any) => [f.name, f.type]),
      [
        ['title', 'text'],
        ['author', 'relation'],
        ['cover', 'file'],
      ],
    );
    assert.equal(created.body.schema[1].options.toCollection, 'users');
    assert.deepEqual(created.body.schema[2].options.mimeTypes, ['image/png', 'image/jpeg']);
  });

  test('add a record with an upload, related to a user, and see the preview', async () => {
    const user = await admin('POST', '/api/collections/users/records', { body: { email: 'ada@example.com', password: 'ada-password-1', passwordConfirm: 'ada-password-1', name: 'Ada' } });
    assert.equal(user.status, 200, user.text);
    await page.getByRole('button', { name: 'New record' }).click();
    const panel = page.getByRole('dialog', { name: 'New posts record' });
    await panel.getByLabel('title').fill('Hello world');
    await panel.getByRole('radio', { name: /Ada/ }).check();
    await panel.getByLabel('Upload cover').setInputFiles({ name: 'Cover Photo.png', mimeType: 'image/png', buffer: png() });
    await panel.getByRole('img', { name: 'Preview of Cover Photo.png' }).waitFor();
    await look('record panel');
    await panel.getByRole('button', { name: 'Create record' }).click();
    await panel.waitFor({ state: 'detached' });

    const list = await admin('GET', '/api/collections/posts/records');
    assert.equal(list.body.totalItems, 1);
    const record = list.body.items[0];
    assert.equal(record.title, 'Hello world');
    assert.equal(record.author, user.body.id);
    assert.match(record.cover, /^cover_photo_\w+\.png$/);

    await page.getByRole('button', { name: 'Open record Hello world' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit posts record' });
    const preview = edit.getByRole('img', { name: `Preview of ${record.cover}` });
    await preview.waitFor();
    // The browser fetched the stored file and decoded it as the 8x8 image uploaded. (Polled from
    // here: waitForFunction would evaluate its predicate in the page, which the console's CSP forbids.)
    const width = `document.querySelector('img[alt="Preview of ${record.cover}"]')?.naturalWidth`;
    await waitFor(async () => (await page.evaluate(width)) === 8, { what: 'the stored image to load', timeoutMs: 20_000 });
    await page.keyboard.press('Escape');
    await edit.waitFor({ state: 'detached' });
  });

  test('filter the list with the rule language and sort it by a column', async () => {
    for (const title of ['alpha', 'beta', 'delta']) assert.equal((await admin('POST', '/api/collections/posts/records', { body: { title } })).status, 200);
    await page.getByRole('button', { name: 'Refresh records' }).click();
    const titles = () => page.locator('table.records tbody tr td:nth-child(2)').allInnerTexts();
    await waitFor(async () => (await titles()).length === 4, { what: 'four rows' });

    await page.getByLabel('Filter').fill('title ~ "ta"');
    await page.getByLabel('Filter').press('Enter');
    await waitFor(async () => (await titles()).length === 2, { what: 'the filtered rows' });
    await page.getByRole('button', { name: 'Sort by title' }).click();
    await waitFor(async () => (await titles()).join() === 'beta,delta', { what: 'ascending order' });
    assert.equal(await page.getByRole('columnheader', { name: /title/ }).getAttribute('aria-sort'), 'ascending');
    await page.getByRole('button', { name: 'Sort by title' }).click();
    await waitFor(async () => (await titles()).join() === 'delta,beta', { what: 'descending order' });

    await page.getByLabel('Filter').fill('title ~~ "x"');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    assert.match(await describedError(page, 'Filter'), /invalid|unexpected|expected/i);
    await look('records, with a bad filter');
    await page.getByRole('button', { name: 'Clear filter' }).click();
    await waitFor(async () => (await titles()).length === 4, { what: 'every row again' });
    await look('records');
  });

  test("edit a rule: a bad rule shows the server's message at the rule", async () => {
    const expected = await admin('PATCH', '/api/collections/posts', { body: { listRule: 'nope = 1' } });
    assert.equal(expected.status, 400);
    await page.getByRole('link', { name: 'Edit collection' }).click();
    await page.getByRole('tab', { name: 'API rules' }).click();
    await page.getByLabel('Administrators only (list rule)').uncheck();
    await page.getByLabel('List rule', { exact: true }).fill('nope = 1');
    await page.getByRole('button', { name: 'Save changes' }).click();
    assert.equal(await describedError(page, 'List rule'), expected.body.data.listRule.message);
    assert.equal((await admin('GET', '/api/collections/posts')).body.listRule, null, 'nothing was saved');

    await page.getByLabel('List rule', { exact: true }).fill('title != ""');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await waitFor(async () => (await admin('GET', '/api/collections/posts')).body.listRule === 'title != ""', { what: 'the rule to be saved' });
    assert.equal(await page.getByLabel('List rule', { exact: true }).getAttribute('aria-invalid'), null);
    await look('rules');
  });

  test('auth settings: OTP and MFA on users, saved through the API and read back; a bad MFA rule shows its message at the rule', async () => {
    const before = (await admin('GET', '/api/collections/users')).body;
    const expected = await admin('PATCH', '/api/collections/users', { body: { mfa: { rule: 'nope = 1' } } });
    assert.equal(expected.status, 400);
    await nav('Collections');
    await page.getByRole('link', { name: 'Edit collection users' }).click();
    await page.getByRole('tab', { name: 'Authentication' }).click();
    const section = page.getByRole('region', { name: 'Authentication' });
    assert.equal(await section.getByLabel('Sign in with a password').isChecked(), true);
    assert.equal(await section.getByLabel('Identity fields').inputValue(), 'email');
    assert.equal(await section.getByLabel('Token lifetime (seconds)').inputValue(), String(before.authToken.duration));
    await section.getByLabel('Sign in with a code sent by mail').check();
    await section.getByLabel('Code lifetime (seconds)').fill('300');
    await section.getByLabel('Code length (digits)').fill('6');
    await section.getByLabel('Ask for a second method').check();
    await section.getByLabel('Time for the second method (seconds)').fill('600');
    await section.getByLabel('MFA rule').fill('nope = 1');
    await page.getByRole('button', { name: 'Save changes' }).click();
    assert.equal(await describedError(page, 'MFA rule'), expected.body.data.mfa.rule.message);
    assert.deepEqual((await admin('GET', '/api/collections/users')).body.otp, before.otp, 'nothing was saved');
    await look('auth settings, with a bad MFA rule');

    // The server's range message shows at its field too, and the tab says how many problems it holds.
    await section.getByLabel('Code length (digits)').fill('2');
    await section.getByLabel('MFA rule').fill('name = "Ada"');
    await page.getByRole('button', { name: 'Save changes' }).click();
    assert.match(await describedError(page, 'Code length (digits)'), /4 to 20/);
    assert.equal(await page.getByLabel('MFA rule').getAttribute('aria-invalid'), null);
    await page.getByRole('tab', { name: /^Authentication\s*1$/ }).waitFor();

    await section.getByLabel('Code length (digits)').fill('6');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await waitFor(async () => (await admin('GET', '/api/collections/users')).body.otp.enabled === true, { what: 'the settings to be saved' });
    const after = (await admin('GET', '/api/collections/users')).body;
    assert.deepEqual(after.otp, { enabled: true, duration: 300, length: 6 });
    assert.deepEqual(after.mfa, { enabled: true, duration: 600, rule: 'name = "Ada"' });
    assert.deepEqual([after.options.otp, after.options.mfa], [after.otp, after.mfa], 'both shapes carry the same values');
    // Lossless: everything the form did not change is as it was.
    const rest = (c: any) => ({ ...c, otp: undefined, mfa: undefined, updated: undefined, options: { ...c.options, otp: undefined, mfa: undefined } });
    assert.deepEqual(rest(after), rest(before));
    const methods = (await server.request('GET', '/api/collections/users/auth-methods')).body;
    assert.deepEqual([methods.otp, methods.mfa], [{ enabled: true, duration: 300 }, { enabled: true, duration: 600 }]);
    // The rule matches Ada: her password alone is now the first of two factors.
    const first = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'ada@example.com', password: 'ada-password-1' } });
    assert.equal(first.status, 401, first.text);
    assert.match(first.body.mfaId, /^\w+$/);
    await look('auth settings');

    // Turned off again from the console (the later steps sign Ada in with her password alone).
    await section.getByLabel('Ask for a second method').uncheck();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await waitFor(async () => (await admin('GET', '/api/collections/users')).body.mfa.enabled === false, { what: 'MFA to be turned off' });
    assert.equal((await admin('GET', '/api/collections/users')).body.mfa.rule, 'name = "Ada"');
  });

  test('sign in as a user: the token shown is theirs, cannot be refreshed, and is not the console\'s session', async () => {
    const ada = (await admin('GET', '/api/collections/users/records?filter=' + encodeURIComponent('email = "ada@example.com"'))).body.items[0];
    await nav('Users');
    await page.getByRole('button', { name: 'Sign in as Ada' }).click();
    const dialog = page.getByRole('dialog', { name: 'Sign in as Ada' });
    await dialog.getByLabel('Token lifetime (seconds)').fill('99999999999');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    assert.match(await describedError(page, 'Token lifetime (seconds)'), /from 0/);
    await look('sign in as, with an error');

    await dialog.getByLabel('Token lifetime (seconds)').fill('600');
    await dialog.getByRole('button', { name: 'Create token' }).click();
    const shown = dialog.getByLabel('Token of Ada');
    await shown.waitFor();
    const token = await shown.inputValue();
    await dialog.getByText('cannot be refreshed').first().waitFor();
    await dialog.getByText(/Valid until .*\(10 minutes\)/).waitFor();
    await look('impersonation token');
    await dialog.getByRole('button', { name: 'Copy token' }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), token);

    // Used from outside the browser, the token is Ada's: the users' list rule shows her own record only.
    const mine = await curl(`${server.url}/api/collections/users/records`, token);
    assert.equal(mine.status, 200);
    assert.deepEqual(mine.body.items.map((u: any) => u.id), [ada.id]);
    assert.equal((await curl(`${server.url}/api/collections/posts`, token)).status, 403, 'not an administrator');
    const claims = JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
    assert.equal(claims.refreshable, false);
    assert.ok(Math.abs(claims.exp - claims.iat - 600) <= 1, `a 600 s token: ${JSON.stringify(claims)}`);
    const refreshed = await server.request('POST', '/api/collections/users/auth-refresh', { token });
    assert.equal(refreshed.body.token, token, 'a refresh answers the same token');

    // The console kept its own session, and the token is nowhere in the page's storage.
    const stored = JSON.parse((await page.evaluate('localStorage.getItem("pocketbase_auth")')) as string);
    assert.equal(stored.model.email, EMAIL);
    assert.equal((await server.request('GET', '/api/admins/me', { token: stored.token })).status, 200);
    assert.ok(!((await page.evaluate('JSON.stringify(localStorage) + JSON.stringify(sessionStorage)')) as string).includes(token));
    await dialog.getByRole('button', { name: 'Done' }).click();
    await dialog.waitFor({ state: 'detached' });

    // The same from the user's panel.
    await page.getByRole('button', { name: /^Open record Ada/ }).click();
    await page.getByRole('dialog', { name: 'Edit users record' }).getByRole('button', { name: 'Sign in as this user' }).click();
    await dialog.getByLabel('Token lifetime (seconds)').waitFor();
    assert.equal(await page.getByRole('dialog', { name: 'Edit users record' }).count(), 0, 'the token dialog replaced the panel');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'detached' });
  });

  test('_superusers is the Administrators screen, not an editable collection', async () => {
    const listed = (await admin('GET', '/api/collections?perPage=500')).body.items.map((c: any) => c.name);
    assert.ok(listed.includes('_superusers'), 'the API lists it');
    await nav('Collections');
    const row = page.getByRole('row', { name: /_superusers/ });
    await row.getByText('system').waitFor();
    assert.equal(await page.getByRole('link', { name: 'Edit collection _superusers' }).count(), 0);
    const rows = await page.getByRole('rowheader').allInnerTexts();
    assert.match(rows[rows.length - 1], /^_superusers/, `system collection last: ${rows}`);
    await page.getByRole('link', { name: 'Manage administrators (_superusers)' }).click();
    await page.getByRole('heading', { level: 1, name: 'Administrators' }).waitFor();
    // An old link or a typed address to its editor lands there too.
    await page.goto(`${server.url}/_/#/collections/_superusers/edit`);
    await page.getByRole('heading', { level: 1, name: 'Administrators' }).waitFor();
    assert.match(page.url(), /#\/admins$/);

    // An administrator made here is a superuser of PocketBase ≥ 0.23's API.
    await page.getByRole('button', { name: 'New administrator' }).click();
    const form = page.getByRole('dialog', { name: 'New administrator' });
    await form.getByLabel('Email').fill('ops@example.com');
    await form.getByLabel('Password', { exact: true }).fill('ops-password-1');
    await form.getByLabel('Confirm password').fill('ops-password-1');
    await form.getByRole('button', { name: 'Create administrator' }).click();
    await page.getByRole('rowheader', { name: 'ops@example.com' }).waitFor();
    const superusers = await admin('GET', '/api/collections/_superusers/records');
    assert.ok(superusers.body.items.some((r: any) => r.email === 'ops@example.com'));
    const login = await server.request('POST', '/api/collections/_superusers/auth-with-password', { body: { identity: 'ops@example.com', password: 'ops-password-1' } });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.body.record.collectionName, '_superusers');
    await page.getByRole('button', { name: 'Delete administrator ops@example.com' }).click();
    await page.getByRole('dialog', { name: 'Delete administrator ops@example.com?' }).getByRole('button', { name: 'Delete administrator' }).click();
    await page.getByRole('rowheader', { name: 'ops@example.com' }).waitFor({ state: 'detached' });
  });

  test('create an API key, use it with curl, copy, rotate and disable it', async () => {
    await nav('API keys');
    await page.getByRole('button', { name: 'New API key' }).first().click();
    await page.getByLabel('Key name').fill('ci');
    await page.getByLabel('Roles').fill('service');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByRole('dialog', { name: 'Key "ci"' });
    keyValue = await shown.getByLabel('API key', { exact: true }).inputValue();
    assert.match(keyValue, /^cairn_/);
    await look('issued key');
    await shown.getByRole('button', { name: 'Copy API key' }).click();
    assert.equal(await page.evaluate('navigator.clipboard.readText()'), keyValue);

    const records = `${server.url}/api/collections/posts/records`;
    const ok = await curl(records, keyValue);
    assert.equal(ok.status, 200);
    assert.equal(ok.body.totalItems, 4, 'the key reads what the list rule lets it');

    await shown.getByRole('button', { name: 'I have stored it' }).click();
    await page.getByRole('button', { name: 'Rotate key ci' }).click();
    await page.getByRole('dialog', { name: 'Rotate "ci"?' }).getByRole('button', { name: 'Rotate key' }).click();
    const rotated = await page.getByRole('dialog', { name: 'Key "ci"' }).getByLabel('API key', { exact: true }).inputValue();
    assert.notEqual(rotated, keyValue);
    assert.equal((await curl(records, keyValue)).status, 401, 'the old key stops working');
    assert.equal((await curl(records, rotated)).status, 200);
    await page.getByRole('button', { name: 'I have stored it' }).click();

    await page.getByRole('button', { name: 'Disable key ci' }).click();
    await page.getByRole('button', { name: 'Enable key ci' }).waitFor();
    assert.equal((await curl(records, rotated)).status, 401, 'a disabled key is refused');
    await look('keys');
  });

  test('with the keyboard only: create a collection, a record and an API key', async () => {
    await page.goto(`${server.url}/_/#/collections`);
    await page.getByRole('heading', { level: 1, name: 'Collections' }).waitFor();
    await tabTo(page.getByRole('link', { name: 'New collection' }));
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'New collection' }).waitFor();
    await tabTo(page.getByLabel('Collection name'));
    await page.keyboard.type('notes');
    await tabTo(page.getByRole('group', { name: /^Field 1/ }).getByLabel('Name'));
    await page.keyboard.type('body');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'notes' }).waitFor();
    assert.deepEqual((await admin('GET', '/api/collections/notes')).body.schema.map((f: any) => f.name), ['body']);

    await tabTo(page.getByRole('button', { name: 'New record' }));
    await page.keyboard.press('Enter');
    const panel = page.getByRole('dialog', { name: 'New notes record' });
    await tabTo(panel.getByLabel('body'));
    await page.keyboard.type('typed, not clicked');
    await page.keyboard.press('Enter');
    await panel.waitFor({ state: 'detached' });
    assert.deepEqual((await admin('GET', '/api/collections/notes/records')).body.items.map((r: any) => r.body), ['typed, not clicked']);

    // The dialog gave the focus back to "New record"; the menu is before it.
    await tabTo(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }), true);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await tabTo(page.getByRole('button', { name: 'New API key' }).first());
    await page.keyboard.press('Enter');
    await tabTo(page.getByLabel('Key name'));
    await page.keyboard.type('keyboard');
    await page.keyboard.press('Enter');
    const shown = page.getByRole('dialog', { name: 'Key "keyboard"' });
    assert.match(await shown.getByLabel('API key', { exact: true }).inputValue(), /^cairn_/);
    await page.keyboard.press('Escape');
    await shown.waitFor({ state: 'detached' });
    assert.ok((await admin('GET', '/api/keys')).body.items.some((k: any) => k.name === 'keyboard'));
  });

  test('see a failed webhook in the logs and retry it', async () => {
    receiver.respond(() => 500);
    await nav('Collections');
    await page.getByRole('link', { name: 'Edit collection posts' }).click();
    await page.getByRole('tab', { name: /Webhook triggers/ }).click();
    await page.getByRole('button', { name: 'Add trigger' }).click();
    await page.getByRole('group', { name: 'Trigger 1' }).getByLabel('URL').fill(`${receiver.url}/hook`);
    await look('triggers');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await waitFor(async () => (await admin('GET', '/api/collections/posts')).body.options.triggers?.length === 1, { what: 'the trigger to be saved' });
    assert.equal((await admin('POST', '/api/collections/posts/records', { body: { title: 'ping' } })).status, 200);
    await receiver.waitForRequests(1);

    await nav('Webhook logs');
    await page.getByLabel('Collection').selectOption('posts');
    await page.getByLabel('Status').selectOption('failed');
    const retry = page.getByRole('button', { name: /^Retry event .* \(failed, posts\)$/ });
    await retry.waitFor();
    await page.getByRole('cell', { name: /500/ }).first().waitFor();
    await look('webhook logs');

    receiver.respond(() => 200);
    await retry.click();
    const [first, second] = await receiver.waitForRequests(2);
    assert.equal(second.headers['webhook-id'], first.headers['webhook-id'], 'the same event is sent again');
    await page.getByLabel('Status').selectOption('success');
    await page.getByRole('button', { name: /^Retry event .* \(success, posts\)$/ }).waitFor();
  });

  test('generate a migration with its diff, apply it and export it', async () => {
    await nav('Migrations');
    await page.getByRole('button', { name: 'Generate migration' }).click();
    await page.getByLabel('Migration name').fill('initial');
    await page.getByRole('button', { name: 'Generate', exact: true }).click();
    const preview = page.getByRole('dialog', { name: 'Generated: initial' });
    const yaml = await preview.getByLabel('Migration YAML').innerText();
    assert.match(yaml, /posts:/);
    assert.match(yaml, /create_table/);
    await look('migration preview');
    await preview.getByRole('button', { name: 'Apply migration' }).click();
    await preview.waitFor({ state: 'detached' });
    await page.getByRole('row', { name: /initial.*applied/ }).waitFor();
    const status = await admin('GET', '/api/migrations/status');
    assert.equal(status.body.appliedCount, 1);
    const version: string = status.body.lastAppliedVersion;

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export all (ZIP)' }).click()]);
    assert.equal(download.suggestedFilename(), 'migrations.zip');
    const zip = readFileSync((await download.path())!);
    assert.equal(zip.subarray(0, 2).toString(), 'PK');
    assert.ok(zip.includes(`${version}_initial.yaml`), 'the archive holds the migration file');
    await look('migrations');
  });

  test('settings: a test mail goes out through SMTP', async () => {
    await nav('Settings');
    await page.getByLabel('Send a test mail to').fill('ops@example.com');
    await page.getByRole('button', { name: 'Send test mail' }).click();
    const mail = await inbox.next('ops@example.com');
    assert.match(mail.subject, /^\[Test\]/);
    await look('settings');
  });

  test('request logs: the refused requests of this session, by filter', async () => {
    await nav('Request logs');
    await page.getByLabel('Filter logs').fill('status = 400 && url ~ "/api/collections/posts"');
    await page.getByRole('button', { name: 'Apply filter' }).click();
    // The unfiltered list shows first; the filtered one replaces it.
    const statuses = () => page.locator('tbody tr td:nth-child(2)').allInnerTexts();
    await waitFor(async () => ((s) => s.length > 0 && s.every((t) => t === '400'))(await statuses()), { what: 'only the refused requests' });
    await page.getByRole('cell', { name: /PATCH \/api\/collections\/posts/ }).first().waitFor();
    await look('request logs');
  });

  test('backups: take one from the console (SQLite), or read why not (PostgreSQL)', async () => {
    await nav('Backups');
    await page.getByLabel('Backup name').fill('from_console.zip');
    await page.getByRole('button', { name: 'Take a backup' }).click();
    if (onPostgres) await page.getByRole('alert').getByText(/PostgreSQL/).waitFor();
    else await page.getByRole('rowheader', { name: 'from_console.zip' }).waitFor({ timeout: 30_000 });
    await look('backups');
  });

  test('the other screens, dialogs and states look right at every width and theme', async () => {
    await admin('POST', '/api/webhooks/cron', { body: { name: 'nightly-report', schedule: '0 3 * * *', timezone: 'Europe/Paris', url: `${receiver.url}/report` } });
    const steps = [{ type: 'create_record', collection: 'posts', data: { title: '{{event.title}}' } }];
    const flow = await admin('POST', '/api/workflows', { body: { name: 'inbound', steps } });
    assert.equal(flow.status, 200, flow.text);
    assert.equal((await server.request('POST', '/api/workflows/inbound/events', { body: { title: 'from a workflow' }, token: flow.body.secret })).status, 202);
    assert.equal((await admin('POST', '/api/admins', { body: { email: 'second@example.com', password: 'second-password-1', passwordConfirm: 'second-password-1' } })).status, 200);

    await nav('Cron jobs');
    await page.getByRole('rowheader', { name: 'nightly-report' }).waitFor();
    await look('cron jobs');
    await page.getByRole('button', { name: 'Edit cron job nightly-report' }).click();
    await page.getByText('Next runs').waitFor();
    await look('cron job form');
    await page.keyboard.press('Escape');

    await nav('Hooks');
    await page.getByRole('rowheader', { name: 'shop.ts' }).waitFor();
    await page.getByRole('rowheader', { name: 'GET /api/shop/report' }).waitFor();
    await page.getByRole('rowheader', { name: 'nightly' }).waitFor();
    await look('hooks');

    await nav('Workflows');
    await look('workflows');
    await page.getByRole('link', { name: 'inbound' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'inbound' }).waitFor();
    await page.getByRole('button', { name: /^Show details of run/ }).first().click();
    await page.getByText('from a workflow').first().waitFor();
    await look('workflow runs');

    await nav('Administrators');
    await page.getByRole('rowheader', { name: 'second@example.com' }).waitFor();
    await look('administrators');
    await page.getByRole('button', { name: 'Delete administrator second@example.com' }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete administrator second@example.com?' });
    await look('confirmation');
    await confirm.getByRole('button', { name: 'Delete administrator' }).click();
    await page.getByRole('rowheader', { name: 'second@example.com' }).waitFor({ state: 'detached' });

    await nav('Users');
    await page.getByRole('button', { name: /^Open record Ada/ }).waitFor();
    await look('users');

    // A new database: its empty lists say what to do first.
    await page.getByRole('button', { name: 'New database' }).click();
    await page.getByLabel('Database name').fill('empty_one');
    await look('new database');
    await page.getByRole('button', { name: 'Create database' }).click();
    await nav('API keys');
    await page.getByText('No API keys in this database.').waitFor();
    await look('an empty list');
    await page.getByLabel('Database', { exact: true }).selectOption('main');
    await page.getByRole('rowheader', { name: 'ci', exact: true }).waitFor();
  });

  test('the pages the mails link to confirm a password reset and a verification', async () => {
    const linkIn = async (kind: string) => {
      const mail = await inbox.next('ada@example.com', kind === 'verification' ? /Verify/ : /Reset/);
      const m = new RegExp(`/_/(#/auth/confirm-${kind}/[^\\s"<]+)`).exec(mail.text);
      assert.ok(m, `a link to the dashboard in:\n${mail.text}`);
      return `${server.url}/_/${m[1].replace(/&amp;/g, '&')}`;
    };
    await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: 'ada@example.com' } });
    await page.goto(await linkIn('password-reset'));
    await page.getByRole('heading', { name: 'Choose a new password' }).waitFor();
    await look('confirm password reset');
    await page.getByLabel('New password', { exact: true }).fill('ada-new-password');
    await page.getByLabel('Confirm new password').fill('ada-new-password');
    await page.getByRole('button', { name: 'Set new password' }).click();
    await page.getByText('Your password is changed').waitFor();
    const login = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'ada@example.com', password: 'ada-new-password' } });
    assert.equal(login.status, 200, login.text);

    // The reset proved the address; a second user is needed for verification.
    await admin('POST', '/api/collections/users/records', { body: { email: 'bob@example.com', password: 'bob-password-1', passwordConfirm: 'bob-password-1' } });
    await server.request('POST', '/api/collections/users/request-verification', { body: { email: 'bob@example.com' } });
    const mail = await inbox.next('bob@example.com', /Verify/);
    const link = /\/_\/(#\/auth\/confirm-verification\/[^\s"<]+)/.exec(mail.text)!;
    await page.goto(`${server.url}/_/${link[1]}`);
    await look('confirm verification');
    await page.getByRole('button', { name: 'Verify my email' }).click();
    await page.getByText('Your email address is verified').waitFor();
    const bob = await admin('GET', '/api/collections/users/records?perPage=100');
    assert.equal(bob.body.items.find((u: any) => u.email === 'bob@example.com').verified, true);

    // Where /api/oauth2-redirect sends an OAuth2 sign-in's popup (PocketBase's paths).
    await page.goto(`${server.url}/_/#/auth/oauth2-redirect-success`);
    await page.getByRole('heading', { level: 1, name: 'Signed in' }).waitFor();
    await page.goto(`${server.url}/_/#/auth/oauth2-redirect-failure`);
    await page.getByRole('heading', { level: 1, name: 'Sign-in failed' }).waitFor();
    await page.getByText('The sign-in did not complete').waitFor();
  });

  test('on a phone: a compact top bar, a menu that takes the focus, forms in one column', async () => {
    await setView(page, PHONE);
    await page.goto(`${server.url}/_/#/collections`);
    await page.getByRole('heading', { level: 1, name: 'Collections' }).waitFor();
    const bar = (await page.getByRole('banner').boundingBox())!;
    assert.ok(bar.height <= 64, `the top bar is ${bar.height} px tall`);
    const menuButton = page.getByRole('button', { name: 'Open menu' });
    const button = (await menuButton.boundingBox())!;
    assert.ok(button.y >= bar.y && button.y + button.height <= bar.y + bar.height, 'the menu button sits in the bar');
    const sidebar = page.getByRole('navigation', { name: 'Main' });
    assert.equal(await sidebar.isVisible(), false, 'the closed menu is out of sight and out of the tab order');

    await menuButton.click();
    const cron = sidebar.getByRole('link', { name: 'Cron jobs' });
    await cron.waitFor();
    // The menu moves the focus in an effect, after the paint that shows it: poll, do not race it.
    const current = page.getByRole('link', { name: 'Collections', exact: true }).and(page.locator(':focus'));
    await waitFor(async () => (await current.count()) === 1, { what: 'the current page link to have the focus' });
    await look('menu on a phone');
    await setView(page, PHONE);
    await page.keyboard.press('Escape');
    await sidebar.waitFor({ state: 'hidden' });
    await waitFor(async () => (await page.getByRole('button', { name: 'Open menu' }).and(page.locator(':focus')).count()) === 1, { what: 'Escape to give the focus back' });

    await page.getByRole('button', { name: 'Open menu' }).click();
    await cron.click();
    await page.getByRole('heading', { level: 1, name: 'Cron jobs' }).waitFor();

    await page.goto(`${server.url}/_/#/settings`);
    const name = (await page.getByLabel('Application name').boundingBox())!;
    const url = (await page.getByLabel('Application URL').boundingBox())!;
    assert.ok(url.y > name.y + name.height && Math.abs(url.x - name.x) < 1, 'the fields are one under the other');
    await setView(page, WIDE);
  });

  test('sign out, the sign-in and forgotten password screens, sign in again', async () => {
    await page.goto(`${server.url}/_/#/collections`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    await look('sign in');
    await page.getByRole('link', { name: /forgot/i }).click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    await look('forgotten password');
    await page.goto(`${server.url}/_/`);
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Collections' }).waitFor();
  });

  test('every screen visited: no sideways scrolling, no serious accessibility violation, every control named, no error logged', () => {
    assert.deepEqual(problems, []);
    assert.deepEqual(unnamed, []);
    assert.deepEqual(b.errors, []);
  });
});
