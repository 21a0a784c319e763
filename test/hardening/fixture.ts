import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { SignJWT } from 'jose';
import { deriveKey } from '../../src/auth/secret.ts';
import { onPostgres } from '../helpers/postgres.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

export const OAUTH2_CLIENT_SECRET = 'hardening-client-secret-0123456789';
export const WORKFLOW_SECRET = 'hardening-workflow-secret-0123';
export const TRIGGER_SECRET = 'whsec_aGFyZGVuaW5nLXRyaWdnZXItc2VjcmV0';

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

function claimsOf(token: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString());
}

/** A server with one of everything a route can name, and the tokens an attacker would try. */
export interface Fixture {
  server: TestServer;
  user: { token: string; id: string };
  /** Ids and names that exist, for path parameters. */
  ids: {
    sweepRecord: string;
    /** A record the DELETE route may remove. */
    spareRecord: string;
    canaryRecord: string;
    file: string;
    spareAdmin: string;
    spareKey: string;
    cron: string;
    workflow: string;
    run: string;
    log: string;
    migration: string;
    /** A request log entry (`/api/logs/:id`). */
    requestLog: string;
    /** Backups: one to download, one the DELETE route may remove, one that fails its checks. */
    backup: string;
    spareBackup: string;
    badBackup: string;
  };
  /** A non-admin API key (role `reader`) and its token. */
  readerKey: string;
  /** Authorization header values that must all be refused with 401. */
  badTokens: Record<string, string>;
  /** Every stored secret (hashes, token keys, client secrets) that no answer may contain. */
  secrets(): Promise<string[]>;
  /**
   * Row counts of what write routes create or delete (records, users, collections, keys, admins, cron
   * jobs, workflows, databases, migrations and their files) and the settings: a refused request must
   * leave them as they were.
   */
  writes(): Promise<string>;
  /** The state that must survive every hostile request: the canary collection and record, the databases. */
  snapshot(): Promise<string>;
}

export async function startFixture(): Promise<Fixture> {
  const server = await startServer({ env: { CAIRN_WEBHOOK_MAX_ATTEMPTS: '1', CAIRN_WEBHOOK_TIMEOUT_MS: '500' } });
  try {
    return await populate(server);
  } catch (err) {
    // The suite's after hook never sees a fixture that failed half-way; an open server would keep the
    // test process alive, and the whole run waiting for it.
    await server.close();
    throw err;
  }
}

async function populate(server: TestServer): Promise<Fixture> {
  const ok = async (p: Promise<{ status: number; text: string; body: any }>) => {
    const res = await p;
    assert.ok(res.status < 300, res.text);
    return res.body;
  };

  await ok(server.admin('POST', '/api/databases', { body: { name: 'other' } }));
  // One-time codes on, so the OTP routes are swept past their "not enabled" refusal.
  await ok(server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true } } }));
  const user = await createUser(server, 'sweep-user@example.com', 'user-password-1', { name: 'Sweep' });
  const otherDbUser = await createUser(server, 'sweep-user@example.com', 'user-password-1', {}, 'other');
  const gone = await createUser(server, 'gone-user@example.com');
  await ok(server.admin('DELETE', `/api/collections/users/records/${gone.id}`));

  await createCollection(server, { name: 'canary', fields: [{ name: 'title', type: 'text' }, { name: 'n', type: 'number' }] });
  const canary = await ok(server.admin('POST', '/api/collections/canary/records', { body: { title: 'canary', n: 1 } }));
  const open = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };
  await createCollection(server, {
    name: 'sweep',
    ...open,
    fields: [
      { name: 'title', type: 'text' },
      { name: 'n', type: 'number' },
      { name: 'flag', type: 'bool' },
      { name: 'when', type: 'date' },
      { name: 'mail', type: 'email' },
      { name: 'link', type: 'url' },
      { name: 'kind', type: 'select', options: { values: ['a', 'b'], maxSelect: 2 } },
      { name: 'meta', type: 'json' },
      { name: 'body', type: 'editor' },
      { name: 'owner', type: 'relation', options: { toCollection: 'users', maxSelect: 1 } },
      { name: 'doc', type: 'file', options: { maxSelect: 1, maxSize: 100000 } },
    ],
  });
  await ok(server.admin('PATCH', '/api/collections/sweep', { body: { fields: [{ name: 'parent', type: 'relation', options: { toCollection: 'sweep', maxSelect: 1 } }] } }));
  const form = new FormData();
  form.append('title', 'sweep');
  form.append('doc', new Blob(['hello']), 'hello.txt');
  const sweep = await ok(server.admin('POST', '/api/collections/sweep/records', { raw: form }));
  const spareRecord = await ok(server.admin('POST', '/api/collections/sweep/records', { body: { title: 'spare', parent: sweep.id } }));

  // Workflow runs write here in the background, away from the collections whose counts are probed.
  await createCollection(server, { name: 'inbox', fields: [{ name: 'title', type: 'text' }] });
  await createCollection(server, {
    name: 'hooked',
    fields: [{ name: 'title', type: 'text' }],
    options: { triggers: [{ action: 'create', url: 'http://127.0.0.1:9/', method: 'POST', secret: TRIGGER_SECRET }] },
  });
  await ok(server.admin('POST', '/api/collections/hooked/records', { body: { title: 'x' } }));

  const spareAdmin = await ok(server.admin('POST', '/api/admins', { body: { email: 'spare-admin@example.com', password: 'spare-password-1', passwordConfirm: 'spare-password-1' } }));
  const reader = await ok(server.admin('POST', '/api/keys', { body: { name: 'reader', roles: ['reader'] } }));
  const spareKey = await ok(server.admin('POST', '/api/keys', { body: { name: 'spare', roles: [] } }));
  const revoked = await ok(server.admin('POST', '/api/keys', { body: { name: 'revoked', roles: ['admin'] } }));
  const otherDbKey = await ok(server.admin('POST', '/api/keys', { body: { name: 'elsewhere', roles: ['admin'] }, db: 'other' }));
  await ok(server.admin('DELETE', `/api/keys/${revoked.id}`));

  const cron = await ok(server.admin('POST', '/api/webhooks/cron', { body: { name: 'yearly', schedule: '0 0 1 1 *', url: 'http://127.0.0.1:9/', method: 'POST' } }));
  await ok(
    server.admin('POST', '/api/workflows', {
      body: { name: 'wf', secret: WORKFLOW_SECRET, steps: [{ type: 'create_record', collection: 'inbox', data: { title: '{{event.title}}' } }] },
    }),
  );
  const run = await ok(server.request('POST', '/api/workflows/wf/events', { body: { title: 'from a workflow' }, headers: { authorization: `Bearer ${WORKFLOW_SECRET}` } }));
  await ok(
    server.admin('PATCH', '/api/settings', {
      body: {
        oauth2: {
          providers: [
            { name: 'generic', clientId: 'hardening-client', clientSecret: OAUTH2_CLIENT_SECRET, authUrl: 'http://127.0.0.1:9/auth', tokenUrl: 'http://127.0.0.1:9/token', userInfoUrl: 'http://127.0.0.1:9/me' },
          ],
        },
      },
    }),
  );
  const migration = await ok(server.admin('GET', '/api/migrations/generate?name=sweep'));
  const log = await waitFor(async () => (await server.admin('GET', '/api/webhooks/logs')).body.items?.[0]);
  const fileToken = (await ok(server.request('POST', '/api/files/token', { token: user.token }))).token as string;
  if (onPostgres) {
    // Backups of a PostgreSQL instance are its own tools' job: the routes refuse with a 400, which the
    // sweep then checks like any refusal.
    assert.equal((await server.admin('POST', '/api/backups', { body: { name: 'sweep.zip' } })).status, 400);
  } else {
    await ok(server.admin('POST', '/api/backups', { body: { name: 'sweep.zip' } }));
    await ok(server.admin('POST', '/api/backups', { body: { name: 'spare.zip' } }));
    const badZip = new FormData();
    badZip.append('file', new Blob(['PK\u0003\u0004 not a backup']), 'bad.zip');
    await ok(server.admin('POST', '/api/backups/upload', { raw: badZip }));
  }
  const requestLog = await waitFor(async () => (await server.admin('GET', '/api/logs?perPage=1')).body.items?.[0]);

  // Tokens an attacker can make: signed with a guessed key, expired but well signed, unsigned, and
  // genuine ones used where they do not belong.
  const adminClaims = claimsOf(server.adminToken);
  const authKey = deriveKey(server.services.secret, 'auth');
  const forged = await new SignJWT(adminClaims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode('guessed'.repeat(8)));
  const expired = await new SignJWT({ ...adminClaims, exp: Math.floor(Date.now() / 1000) - 60 }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(authKey);
  const badTokens: Record<string, string> = {
    garbage: 'Bearer abc',
    'garbage JWT': 'Bearer abc.def.ghi',
    'very long': `Bearer ${'a'.repeat(6000)}`,
    forged: `Bearer ${forged}`,
    expired: `Bearer ${expired}`,
    'alg none': `Bearer ${b64({ alg: 'none', typ: 'JWT' })}.${b64(adminClaims)}.`,
    'other database': `Bearer ${otherDbUser.token}`,
    'deleted user': `Bearer ${gone.token}`,
    'file token': `Bearer ${fileToken}`,
    'deleted key': `Bearer ${revoked.key}`,
    'deleted key token': `Bearer ${revoked.token}`,
    'admin key of another database': `Bearer ${otherDbKey.key}`,
    'admin key token of another database': `Bearer ${otherDbKey.token}`,
  };

  const system = server.services.registry.system;
  const secrets = async (): Promise<string[]> => {
    // Trigger secrets sign outgoing requests, so they are kept as given and shown to administrators.
    const out = [OAUTH2_CLIENT_SECRET, WORKFLOW_SECRET, server.services.secret];
    const main = await server.services.registry.get('main');
    for (const r of await system.all<{ passwordHash: string; tokenKey: string }>('SELECT passwordHash, tokenKey FROM _admins')) out.push(r.passwordHash, r.tokenKey);
    for (const r of await main.all<{ passwordHash: string; tokenKey: string }>('SELECT passwordHash, tokenKey FROM users')) out.push(r.passwordHash, r.tokenKey);
    for (const r of await main.all<{ keyHash: string; tokenKey: string }>('SELECT keyHash, tokenKey FROM _api_keys')) out.push(r.keyHash, r.tokenKey);
    for (const r of await main.all<{ secretHash: string }>('SELECT secretHash FROM _workflows')) out.push(r.secretHash);
    for (const r of await main.all<{ hash: string }>('SELECT hash FROM _otps')) out.push(r.hash);
    return out.filter((s) => typeof s === 'string' && s.length >= 8);
  };

  // Row counts in one statement per database: the sweep asks after every write it sends.
  const counts = (tables: string[]) => `SELECT ${tables.map((t) => `(SELECT COUNT(*) FROM ${t}) AS ${t.replace(/^_/, 'n_')}`).join(', ')}`;
  const mainCounts = counts(['sweep', 'users', '_collections', '_api_keys', '_cron_jobs', '_workflows']);
  const systemCounts = counts(['_admins', '_databases', '_migrations']);
  const writes = async (): Promise<string> => {
    const main = await server.services.registry.get('main');
    const parts = await Promise.all([
      main.get(mainCounts),
      system.get(systemCounts),
      system.all('SELECT name, value FROM _settings ORDER BY name'),
      // On PostgreSQL the migration files are kept in the database; the directory only mirrors them.
      onPostgres ? system.all('SELECT version, removed, md5(text) AS text FROM _migration_files ORDER BY version') : [],
    ]);
    return JSON.stringify([...parts, readdirSync(path.join(server.dir, 'migrations')).sort()]);
  };

  const snapshot = async (): Promise<string> => {
    const parts = await Promise.all([
      server.admin('GET', '/api/collections/canary'),
      server.admin('GET', `/api/collections/canary/records/${canary.id}`),
      server.admin('GET', '/api/collections/canary/records'),
      server.admin('GET', '/api/databases'),
      server.admin('GET', '/api/admins/me'),
    ]);
    return JSON.stringify(parts.map((p) => [p.status, p.body]));
  };

  return {
    server,
    user,
    readerKey: reader.key,
    badTokens,
    secrets,
    writes,
    snapshot,
    ids: {
      sweepRecord: sweep.id,
      spareRecord: spareRecord.id,
      canaryRecord: canary.id,
      file: sweep.doc,
      spareAdmin: spareAdmin.id,
      spareKey: spareKey.id,
      cron: cron.id,
      workflow: 'wf',
      run: run.id,
      log: log.id,
      migration: migration.version,
      requestLog: requestLog.id,
      backup: 'sweep.zip',
      spareBackup: 'spare.zip',
      badBackup: 'bad.zip',
    },
  };
}
