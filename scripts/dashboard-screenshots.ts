// Takes the screenshots of docs/dashboard.md: a real server with sample data, driven through the
// dashboard in Debian's Chromium (npm run screenshots:dashboard; needs the build and /usr/bin/chromium).
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { launchBrowser } from '../test/dashboard/browser.ts';
import { startReceiver } from '../test/helpers/receiver.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer } from '../test/helpers/server.ts';
import { waitFor } from '../test/helpers/wait.ts';

const OUT = path.resolve('docs/dashboard');
mkdirSync(OUT, { recursive: true });

const receiver = await startReceiver();
receiver.respond((_req, n) => (n % 3 === 1 ? 503 : 200));
const server = await startServer({ env: { CAIRN_WEBHOOK_MAX_ATTEMPTS: '2', CAIRN_WEBHOOK_BACKOFF_MS: '50' } });
const admin = server.admin;

// Sample data: an auth collection of users, posts with a relation, a file and triggers.
const people = [
  ['Ada Lovelace', 'ada@example.com'],
  ['Grace Hopper', 'grace@example.com'],
  ['Alan Turing', 'alan@example.com'],
];
const ids: string[] = [];
for (const [name, email] of people) {
  const r = await admin('POST', '/api/collections/users/records', { body: { name, email, password: 'sample-password-1', passwordConfirm: 'sample-password-1', verified: true } });
  ids.push(r.body.id);
}
await admin('POST', '/api/collections', {
  body: {
    name: 'posts',
    fields: [
      { name: 'title', type: 'text', required: true, presentable: true, options: { max: 200 } },
      { name: 'status', type: 'select', options: { values: ['draft', 'review', 'live'] } },
      { name: 'author', type: 'relation', options: { toCollection: 'users' } },
      { name: 'views', type: 'number', options: { noDecimal: true } },
      { name: 'featured', type: 'bool' },
      { name: 'meta', type: 'json' },
      { name: 'cover', type: 'file', options: { mimeTypes: ['image/png', 'image/jpeg'] } },
    ],
    listRule: 'status = "live" || author = @request.auth.id',
    viewRule: '',
    createRule: '@request.auth.id != ""',
    options: { triggers: [{ action: 'create', url: `${receiver.url}/hooks/posts`, method: 'POST' }] },
  },
});
await admin('POST', '/api/collections', { body: { name: 'comments', fields: [{ name: 'post', type: 'relation', options: { toCollection: 'posts' } }, { name: 'text', type: 'editor' }] } });
const titles = ['Shipping the console', 'Rules, explained', 'Webhooks that never lose an event', 'Migrations from dev to prod', 'One SQLite file per database', 'Why append-only schemas', 'Cron without a second service', 'PocketBase SDK compatibility'];
for (const [i, title] of titles.entries()) {
  await admin('POST', '/api/collections/posts/records', {
    body: { title, status: ['live', 'draft', 'review'][i % 3], author: ids[i % 3], views: 120 * (i + 1) + 7, featured: i % 4 === 0, meta: { tags: ['release'], words: 800 + i * 90 } },
  });
}
await waitFor(async () => (await admin('GET', '/api/webhooks/logs?perPage=50')).body.totalItems >= titles.length + 2, { what: 'webhook attempts', timeoutMs: 20_000 });
await admin('POST', '/api/keys', { body: { name: 'reporting', roles: ['reports'] } });
await admin('POST', '/api/keys', { body: { name: 'backend', roles: ['admin'] } });
await admin('POST', '/api/webhooks/cron', { body: { name: 'nightly-report', schedule: '0 3 * * *', timezone: 'Europe/Paris', url: `${receiver.url}/report`, method: 'POST' } });
await admin('POST', '/api/webhooks/cron', { body: { name: 'heartbeat', schedule: '@every 10m', url: `${receiver.url}/beat`, method: 'GET' } });
await admin('GET', '/api/migrations/generate?name=initial%20schema&description=users,%20posts%20and%20comments');
const list = await admin('GET', '/api/migrations');
await admin('POST', `/api/migrations/${list.body.items[0].version}/apply`);
await admin('PATCH', '/api/collections/posts', { body: { indexes: ['CREATE INDEX idx_posts_status ON posts (status)'] } });
await admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true, duration: 300, length: 6 }, mfa: { enabled: true, rule: 'role = "admin"' } } });

async function shoot(page: Page, name: string) {
  await page.mouse.move(0, 0); // no row highlighted by a pointer left where a button was
  await page.waitForTimeout(250); // let transitions settle; a screenshot is not a test
  await page.screenshot({ path: path.join(OUT, `${name}.png`) });
  console.log(`docs/dashboard/${name}.png`);
}

async function session(colorScheme: 'light' | 'dark', width: number, height: number) {
  const b = await launchBrowser({ width, height, colorScheme });
  const page = b.page;
  await page.goto(`${server.url}/_/`);
  await page.getByLabel('Email').fill(ADMIN_EMAIL);
  await page.getByLabel('Password').fill(ADMIN_PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { level: 1, name: 'Collections' }).waitFor();
  return b;
}

const light = await session('light', 1360, 860);
let page = light.page;
await shoot(page, 'collections');
await page.goto(`${server.url}/_/#/collections/posts`);
await page.getByRole('button', { name: /^Open record/ }).first().waitFor();
await page.getByLabel('Expand').fill('author');
await page.getByRole('button', { name: 'Apply filter' }).click();
await page.getByRole('button', { name: 'Sort by title' }).click();
await page.waitForTimeout(300);
await shoot(page, 'records');
await page.getByRole('button', { name: 'Open record Rules, explained' }).click();
await page.getByRole('dialog').waitFor();
await shoot(page, 'record-panel');
await page.keyboard.press('Escape');
await page.goto(`${server.url}/_/#/collections/posts/edit`);
await page.getByRole('group', { name: /^Field 3/ }).waitFor();
await shoot(page, 'collection-fields');
await page.getByRole('tab', { name: 'API rules' }).click();
await page.getByLabel('List rule', { exact: true }).fill('status = "live" || author = @request.auth.id && nope = 1');
await page.getByRole('button', { name: 'Save changes' }).click();
await page.locator('.error-text').first().waitFor();
await shoot(page, 'collection-rules');
await page.goto(`${server.url}/_/#/collections/users/edit`);
await page.getByRole('tab', { name: 'Authentication' }).click();
await page.getByRole('group', { name: 'One-time codes (OTP)' }).scrollIntoViewIfNeeded();
await shoot(page, 'collection-auth');
await page.goto(`${server.url}/_/#/users`);
await page.getByRole('button', { name: 'Sign in as Ada Lovelace' }).click();
await page.getByLabel('Token lifetime (seconds)').fill('3600');
await page.getByRole('button', { name: 'Create token' }).click();
await page.getByLabel('Token of Ada Lovelace').waitFor();
await shoot(page, 'impersonate');
await page.keyboard.press('Escape');
await page.goto(`${server.url}/_/#/webhooks`);
await page.getByRole('button', { name: /^Retry event/ }).first().waitFor();
await shoot(page, 'webhook-logs');
await page.goto(`${server.url}/_/#/keys`);
await page.getByRole('button', { name: 'New API key' }).click();
await page.getByLabel('Key name').fill('ci');
await page.getByRole('button', { name: 'Create key' }).click();
await page.getByRole('dialog', { name: 'Key "ci"' }).waitFor();
await shoot(page, 'api-key-created');
await page.getByRole('button', { name: 'I have stored it' }).click();
await page.goto(`${server.url}/_/#/cron`);
await page.getByRole('button', { name: 'Edit cron job nightly-report' }).click();
await page.getByText('Next runs').waitFor();
await shoot(page, 'cron');
await page.keyboard.press('Escape');
await page.goto(`${server.url}/_/#/migrations`);
await admin('PATCH', '/api/collections/comments', { body: { fields: [{ name: 'post', type: 'relation', options: { toCollection: 'posts' } }, { name: 'text', type: 'editor' }, { name: 'approved', type: 'bool' }] } });
await page.getByRole('button', { name: 'Generate migration' }).click();
await page.getByLabel('Migration name').fill('approve comments');
await page.getByRole('button', { name: 'Generate', exact: true }).click();
await page.getByRole('dialog', { name: /^Generated/ }).waitFor();
await shoot(page, 'migration-preview');
await page.goto(`${server.url}/_/#/settings`);
await page.getByRole('heading', { name: 'OAuth2 providers' }).waitFor();
await shoot(page, 'settings');
await light.close();

const dark = await session('dark', 1360, 860);
page = dark.page;
await page.goto(`${server.url}/_/#/collections/posts`);
await page.getByRole('button', { name: /^Open record/ }).first().waitFor();
await shoot(page, 'records-dark');
await dark.close();

const phone = await session('light', 390, 844);
page = phone.page;
await shoot(page, 'phone-collections');
await page.goto(`${server.url}/_/#/collections/posts`);
await page.getByRole('button', { name: /^Open record/ }).first().waitFor();
await shoot(page, 'phone-records');
await page.getByRole('button', { name: 'Open record Rules, explained' }).click();
await page.getByRole('dialog').waitFor();
await shoot(page, 'phone-record-panel');
await page.keyboard.press('Escape');
await page.goto(`${server.url}/_/#/webhooks`);
await page.getByRole('button', { name: /^Retry event/ }).first().waitFor();
await shoot(page, 'phone-webhook-logs');
await page.getByRole('button', { name: 'Open menu' }).click();
await shoot(page, 'phone-menu');
await page.keyboard.press('Escape');
await page.goto(`${server.url}/_/#/collections/users/edit`);
await page.getByRole('tab', { name: 'Authentication' }).click();
await page.getByRole('group', { name: 'Multi-factor authentication (MFA)' }).scrollIntoViewIfNeeded();
await shoot(page, 'phone-collection-auth');
await page.goto(`${server.url}/_/#/users`);
await page.getByRole('button', { name: 'Sign in as Grace Hopper' }).click();
await page.getByLabel('Token lifetime (seconds)').fill('-1');
await page.getByRole('button', { name: 'Create token' }).click();
await page.locator('.error-text').first().waitFor();
await shoot(page, 'phone-impersonate-error');
await page.getByLabel('Token lifetime (seconds)').fill('');
await page.getByRole('button', { name: 'Create token' }).click();
await page.getByLabel('Token of Grace Hopper').waitFor();
await shoot(page, 'phone-impersonate');
await phone.close();

const phoneDark = await session('dark', 390, 844);
page = phoneDark.page;
await page.goto(`${server.url}/_/#/keys`);
await page.getByRole('button', { name: 'Rotate key reporting' }).waitFor();
await shoot(page, 'phone-keys-dark');
await phoneDark.close();

await server.close();
await receiver.close();
