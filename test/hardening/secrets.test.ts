import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { unzipEntries } from '../../src/lib/zip.ts';
import { dumpRows, openStorage, storedInstanceSecret } from '../helpers/inspect.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { freePort, spawnServer, type SpawnedServer } from '../helpers/process.ts';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { type Reply, request, type RequestOptions } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const ADMIN = { email: 'secrets-admin@example.com', password: 'secrets-admin-password-1' };
const USER_PASSWORD = 'secrets-user-password-1';
const NEW_USER_PASSWORD = 'secrets-user-password-2';
const SPARE_ADMIN_PASSWORD = 'spare-admin-password-1';
const CLIENT_SECRET = 'oauth2-client-secret-do-not-show';
const SMTP_PASSWORD = 'smtp-password-do-not-log';
const WORKFLOW_SECRET = 'workflow-secret-0123456789';
const OAUTH2_CODE = 'oauth2-code-do-not-log';
const OAUTH2_VERIFIER = 'oauth2-verifier-do-not-log';
const RECEIVER_TOKEN = 'receiver-header-token-do-not-log';

interface Answer {
  label: string;
  text: string;
  /** Secrets this answer is the one place to show (a new key, a new workflow secret). */
  shows?: string[];
}

/**
 * Secrets never leave in answers, webhook payloads, migration files or logs: every place that returns
 * an admin, a record, an API key, settings, a workflow or a migration is called on a real server
 * process, and checked against every hash, token key and plain secret stored or sent.
 */
describe('secrets stay out of answers, webhooks, migrations and logs', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-secrets-'));
  let server: SpawnedServer;
  let receiver: Receiver;
  const answers: Answer[] = [];
  const secrets = new Set<string>([ADMIN.password, USER_PASSWORD, NEW_USER_PASSWORD, SPARE_ADMIN_PASSWORD, CLIENT_SECRET, SMTP_PASSWORD, OAUTH2_CODE, OAUTH2_VERIFIER, RECEIVER_TOKEN]);
  /** Bearer credentials: fine in the answer that issues them, never in logs. */
  const credentials = new Set<string>();

  /**
   * Every hash and token key stored so far (they change with passwords and rotations): each value of
   * a column named like one, in every table of the instance's and the main database's storage, and
   * the generated instance secret.
   */
  async function collectStored(): Promise<void> {
    const storage = await openStorage(dir);
    try {
      let found = 0;
      for (const db of [storage.system, await storage.database('main')]) {
        for (const [table, rows] of Object.entries(await dumpRows(db))) {
          for (const row of rows) {
            for (const [column, value] of Object.entries(row)) {
              // Not `secret` columns: a trigger's signing secret is kept in clear, and shown to
              // administrators with its collection (see above).
              const secretColumn = /hash$|^tokenKey$/i.test(column) || (table === '_secrets' && column === 'value');
              if (secretColumn && typeof value === 'string' && value !== '') {
                secrets.add(value);
                found++;
              }
            }
          }
        }
      }
      // At least the admin's hash and token key: a dump that found nothing would make the check empty.
      assert.ok(found >= 2, 'stored hashes and token keys were found');
      const instance = await storedInstanceSecret(dir, storage.system);
      assert.ok(instance, 'the generated instance secret is stored');
      secrets.add(instance);
    } finally {
      await storage.close();
    }
  }

  async function call(label: string, method: string, url: string, options: RequestOptions = {}, shows: string[] = []): Promise<Reply> {
    const res = await request(server.url, method, url, options);
    assert.ok(res.status < 500, `${label}: ${res.status} ${res.text}`);
    answers.push({ label, text: res.text, shows });
    return res;
  }

  before(async () => {
    receiver = await startReceiver();
    const closedPort = await freePort();
    server = await spawnServer(dir, {
      // debug: every request's line, including those the request log records (not on stdout at info).
      CAIRN_LOG_LEVEL: 'debug',
      CAIRN_ADMIN_EMAIL: ADMIN.email,
      CAIRN_ADMIN_PASSWORD: ADMIN.password,
      CAIRN_SMTP_URL: `smtp://mailer:${SMTP_PASSWORD}@127.0.0.1:${closedPort}`,
      CAIRN_WEBHOOK_MAX_ATTEMPTS: '1',
    });
  });
  after(async () => {
    await server?.kill();
    await receiver?.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  test('every answer that carries an admin, record, key, setting, workflow or migration is free of secrets', async () => {
    const login = await call('admin sign-in', 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN.email, password: ADMIN.password } });
    const admin = login.body.token as string;
    credentials.add(admin);
    const asAdmin = (o: RequestOptions = {}) => ({ ...o, token: admin });
    const triggers = ['create', 'update'].map((action) => ({
      action,
      url: `${receiver.url}/users`,
      method: 'POST',
      headers: { authorization: `Bearer ${RECEIVER_TOKEN}` },
      secret: 'whsec_c2VjcmV0cy10ZXN0LXRyaWdnZXItc2VjcmV0',
    }));
    // Trigger headers and signing secrets are sent as configured, so they are kept in clear and shown
    // to administrators with the collection (docs/webhooks.md); nowhere else.
    await call('users with triggers', 'PATCH', '/api/collections/users', asAdmin({ body: { options: { triggers } } }), [RECEIVER_TOKEN]);
    await call('admin refresh', 'POST', '/api/admins/auth-refresh', asAdmin());
    await call('admin me', 'GET', '/api/admins/me', asAdmin());
    const spare = await call('admin create', 'POST', '/api/admins', asAdmin({ body: { email: 'spare@example.com', password: SPARE_ADMIN_PASSWORD, passwordConfirm: SPARE_ADMIN_PASSWORD } }));
    await call('admin list', 'GET', '/api/admins', asAdmin());
    await call('admin view', 'GET', `/api/admins/${spare.body.id}`, asAdmin());
    await call('admin update', 'PATCH', `/api/admins/${spare.body.id}`, asAdmin({ body: { password: `${SPARE_ADMIN_PASSWORD}x`, passwordConfirm: `${SPARE_ADMIN_PASSWORD}x` } }));
    secrets.add(`${SPARE_ADMIN_PASSWORD}x`);
    await call('failed admin sign-in', 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN.email, password: `${ADMIN.password}-wrong` } });
    await collectStored();

    const registered = await call('register', 'POST', '/api/auth/register', { body: { email: 'secret-user@example.com', password: USER_PASSWORD, passwordConfirm: USER_PASSWORD, name: 'S' } });
    const userId = registered.body.id as string;
    const signIn = await call('user sign-in', 'POST', '/api/auth/login', { body: { email: 'secret-user@example.com', password: USER_PASSWORD } });
    let user = signIn.body.token as string;
    credentials.add(user);
    await call('collection sign-in', 'POST', '/api/collections/users/auth-with-password', { body: { identity: 'secret-user@example.com', password: USER_PASSWORD } });
    await call('failed user sign-in', 'POST', '/api/auth/login', { body: { email: 'secret-user@example.com', password: `${USER_PASSWORD}-wrong` } });
    await call('user refresh', 'POST', '/api/auth/refresh', { token: user });
    await call('collection refresh', 'POST', '/api/collections/users/auth-refresh', { token: user });
    await call('me', 'GET', '/api/auth/me?fields=*', { token: user });
    await call('own record', 'GET', `/api/collections/users/records/${userId}`, { token: user });
    await call('own update', 'PATCH', `/api/collections/users/records/${userId}`, { token: user, body: { name: 'T' } });
    await collectStored();
    await call('own password change', 'PATCH', `/api/collections/users/records/${userId}`, {
      token: user,
      body: { oldPassword: USER_PASSWORD, password: NEW_USER_PASSWORD, passwordConfirm: NEW_USER_PASSWORD },
    });
    await collectStored();
    user = (await call('user sign-in again', 'POST', '/api/auth/login', { body: { email: 'secret-user@example.com', password: NEW_USER_PASSWORD } })).body.token;
    credentials.add(user);
    await call('password reset request', 'POST', '/api/collections/users/request-password-reset', { body: { email: 'secret-user@example.com' } });

    await call('posts', 'POST', '/api/collections', asAdmin({ body: { name: 'posts', listRule: '', viewRule: '', fields: [{ name: 'owner', type: 'relation', options: { toCollection: 'users' } }] } }));
    await call('post create', 'POST', '/api/collections/posts/records?expand=owner', asAdmin({ body: { owner: userId } }));
    await call('users with everything', 'GET', '/api/collections/users/records?fields=*&expand=posts_via_owner', asAdmin());
    await call('posts expanded for the admin', 'GET', '/api/collections/posts/records?expand=owner&fields=*,expand.owner.*', asAdmin());
    await call('posts expanded for the user', 'GET', '/api/collections/posts/records?expand=owner', { token: user });
    await call('user created by the admin', 'POST', '/api/collections/users/records', asAdmin({ body: { email: 'made@example.com', password: USER_PASSWORD, passwordConfirm: USER_PASSWORD } }));

    const key = await call('key create', 'POST', '/api/keys', asAdmin({ body: { name: 'k', roles: ['reader'] } }));
    secrets.add(key.body.key);
    credentials.add(key.body.token);
    answers[answers.length - 1].shows = [key.body.key];
    await call('key list', 'GET', '/api/keys', asAdmin());
    await call('key view', 'GET', `/api/keys/${key.body.id}`, asAdmin());
    await call('key update', 'PATCH', `/api/keys/${key.body.id}`, asAdmin({ body: { name: 'k2' } }));
    const rotated = await call('key rotate', 'POST', `/api/keys/${key.body.id}/rotate`, asAdmin());
    secrets.add(rotated.body.key);
    credentials.add(rotated.body.token);
    answers[answers.length - 1].shows = [rotated.body.key];
    await call('old key used', 'GET', '/api/collections/posts/records', { token: key.body.key });
    await collectStored();

    const provider = { name: 'generic', clientId: 'cid', clientSecret: CLIENT_SECRET, authUrl: `${receiver.url}/auth`, tokenUrl: `${receiver.url}/token`, userInfoUrl: `${receiver.url}/me` };
    await call('settings update', 'PATCH', '/api/settings', asAdmin({ body: { oauth2: { providers: [provider] } } }));
    await call('settings view', 'GET', '/api/settings', asAdmin());
    await call('auth methods', 'GET', '/api/auth/methods');
    await call('collection auth methods', 'GET', '/api/collections/users/auth-methods');
    await call(
      'OAuth2 sign-in with a code the provider refuses',
      'GET',
      `/api/auth/oauth2-login?provider=generic&code=${OAUTH2_CODE}&codeVerifier=${OAUTH2_VERIFIER}&redirectUrl=http://localhost/cb`,
    );

    await call('workflow create', 'POST', '/api/workflows', asAdmin({ body: { name: 'wf', secret: WORKFLOW_SECRET, steps: [{ type: 'create_record', collection: 'posts', data: { owner: userId } }] } }), [WORKFLOW_SECRET]);
    secrets.add(WORKFLOW_SECRET);
    await collectStored();
    await call('workflow list', 'GET', '/api/workflows', asAdmin());
    await call('workflow view', 'GET', '/api/workflows/wf', asAdmin());
    const event = await call('workflow event', 'POST', '/api/workflows/wf/events', { body: {}, headers: { authorization: `Bearer ${WORKFLOW_SECRET}` } });
    await waitFor(async () => (await request(server.url, 'GET', `/api/workflows/wf/runs/${event.body.id}`, asAdmin())).body.status === 'success');
    await call('workflow runs', 'GET', '/api/workflows/wf/runs', asAdmin());

    await call('cron create', 'POST', '/api/webhooks/cron', asAdmin({ body: { name: 'c', schedule: '0 0 1 1 *', url: `${receiver.url}/cron`, method: 'POST' } }));
    await receiver.waitForRequests(3);
    await waitFor(async () => (await request(server.url, 'GET', '/api/webhooks/logs', asAdmin())).body.totalItems >= 3);
    await call('webhook logs', 'GET', '/api/webhooks/logs', asAdmin());

    const generated = await call('migration generate', 'GET', '/api/migrations/generate?name=secrets', asAdmin());
    await call('migration download', 'GET', `/api/migrations/${generated.body.version}/download`, asAdmin());
    const exported = await fetch(`${server.url}/api/migrations/export`, { headers: { authorization: admin } });
    assert.equal(exported.status, 200);
    for (const entry of await unzipEntries(Buffer.from(await exported.arrayBuffer()), { maxEntries: 100, maxEntrySize: 10_000_000, maxTotalSize: 10_000_000 })) {
      answers.push({ label: `exported ${entry.name}`, text: entry.data.toString('utf8') });
    }
    await collectStored();

    const leaks: string[] = [];
    for (const a of answers) {
      for (const s of secrets) if (!a.shows?.includes(s) && a.text.includes(s)) leaks.push(`${a.label}: ${s.slice(0, 10)}…`);
      // As a key holding a value: a collection's field list names its hidden `tokenKey` field, as PocketBase's does.
      if (/"(passwordHash|tokenKey|keyHash|secretHash|clientSecret)"\s*:|\$argon2/.test(a.text)) leaks.push(`${a.label}: names a secret field`);
    }
    assert.deepEqual(leaks, []);
  });

  test('webhook payloads of auth records carry no password, hash or token key', async () => {
    const bodies = receiver.requests.filter((r) => r.path === '/users').map((r) => r.body);
    assert.ok(bodies.length >= 2);
    for (const body of bodies) {
      for (const s of secrets) assert.equal(body.includes(s), false, `a secret in a webhook payload: ${s.slice(0, 10)}…`);
      assert.doesNotMatch(body, /passwordHash|tokenKey|"password"/);
    }
  });

  test('the log holds no secret and no credential', async () => {
    // The log is written in batches at least every 250 ms.
    const out = await waitFor(() => server.output().includes('/api/migrations/export') && server.output());
    const found = [...secrets, ...credentials].filter((s) => out.includes(s)).map((s) => `${s.slice(0, 10)}…`);
    assert.deepEqual(found, []);
    assert.doesNotMatch(out, /passwordHash|tokenKey|\$argon2|authorization/i);
  });
});
