import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LogIds, type RequestLogEntry } from '../../src/logs/entry.ts';
import { LogStore, logSteps } from '../../src/logs/store.ts';
import { DatabaseLogSink, SqliteThreadLogSink } from '../../src/logs/sink.ts';
import { RequestLogWriter } from '../../src/logs/writer.ts';
import { applySchemaSteps } from '../../src/storage/index.ts';
import type { Database } from '../../src/storage/index.ts';
import { databaseOf, openStorage, type Storage, tablesOf } from '../helpers/inspect.ts';
import { dropDatabaseFor, onPostgres, skipOn } from '../helpers/postgres.ts';
import { decodeQuotedPrintable, tokenFrom } from '../helpers/smtp.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/** Every row of a data directory's request log (all columns, as stored), read past the server: once
 * it has closed, say. */
async function storedLogRows(dir: string): Promise<Record<string, unknown>[]> {
  const storage = await openStorage(dir);
  try {
    return await (await storage.logs()).all('SELECT * FROM _request_logs');
  } finally {
    await storage.close();
  }
}

/** Every row of a running server's request log, through its log database (SQLite or PostgreSQL). */
function logRows(server: TestServer): Promise<Record<string, unknown>[]> {
  return server.services.registry.logs.all('SELECT * FROM _request_logs');
}

function entry(overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  return {
    time: Date.now(),
    method: 'GET',
    url: '/api/health',
    status: 200,
    execTime: 1.5,
    auth: 'guest',
    authId: '',
    database: '',
    userIp: '127.0.0.1',
    remoteIp: '127.0.0.1',
    userAgent: 'test',
    referer: '',
    error: '',
    ...overrides,
  };
}

describe('request logs', () => {
  let server: TestServer;
  let user: Awaited<ReturnType<typeof createUser>>;

  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'notes', listRule: '', viewRule: '', createRule: null, fields: [{ name: 'title', type: 'text' }] });
    user = await createUser(server, 'logged@example.com');
  });
  after(() => server?.close());

  /** Waits until the log holds a request matching `filter`, and returns the list. */
  async function logged(filter: string, count = 1) {
    return waitFor(
      async () => {
        const res = await server.admin('GET', `/api/logs?filter=${encodeURIComponent(filter)}&perPage=500`);
        assert.equal(res.status, 200, res.text);
        return res.body.items.length >= count && res.body;
      },
      { what: `logs matching ${filter}` },
    );
  }

  test('each API request is recorded with its details, in PocketBase v0.22 shape', async () => {
    const created = await server.admin('POST', '/api/collections/notes/records', { body: { title: 'a' } });
    assert.equal(created.status, 200);
    await server.request('GET', `/api/collections/notes/records/${created.body.id}?marker=view`, { headers: { 'user-agent': 'logs-test-agent', referer: 'http://app.example/page' } });
    await server.request('POST', '/api/collections/notes/records?marker=refused', { token: user.token, body: { title: 'b' } });
    await server.request('GET', '/api/collections/nope/records?marker=missing');

    const view = (await logged('url ~ "marker=view"')).items[0];
    assert.equal(view.level, 0);
    assert.equal(view.message, `GET /api/collections/notes/records/${created.body.id}?marker=view`);
    assert.equal(view.updated, view.created);
    assert.match(view.created, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z$/);
    // A date copied from an answer filters as it is (PocketBase's form; ISO 8601 works too).
    for (const since of [view.created, view.created.replace(' ', 'T')]) {
      const found = await server.admin('GET', `/api/logs?filter=${encodeURIComponent(`created >= "${since}"`)}&perPage=500`);
      assert.ok(found.body.items.some((l: any) => l.id === view.id), since);
    }
    assert.deepEqual({ ...view.data, execTime: typeof view.data.execTime }, {
      type: 'request',
      method: 'GET',
      url: `/api/collections/notes/records/${created.body.id}?marker=view`,
      status: 200,
      execTime: 'number',
      auth: 'guest',
      authId: '',
      database: 'main',
      userIp: '127.0.0.1',
      remoteIp: '127.0.0.1',
      userAgent: 'logs-test-agent',
      referer: 'http://app.example/page',
      error: '',
    });
    assert.ok(view.data.execTime >= 0);

    const refused = (await logged('url ~ "marker=refused"')).items[0];
    assert.equal(refused.level, 8);
    assert.equal(refused.data.status, 403);
    assert.equal(refused.data.auth, 'authRecord');
    assert.equal(refused.data.authId, user.id);
    assert.match(refused.data.error, /superusers|allowed/i);

    const missing = (await logged('url ~ "marker=missing"')).items[0];
    assert.equal(missing.data.status, 404);
    assert.equal(missing.data.error, 'Collection "nope" not found.');

    const adminCreate = (await logged(`method = "POST" && url = "/api/collections/notes/records" && status = 200`)).items[0];
    assert.equal(adminCreate.data.auth, 'admin');
    assert.ok(adminCreate.data.authId.length > 0);

    // One log by id; an unknown id is a 404.
    const one = await server.admin('GET', `/api/logs/${view.id}`);
    assert.deepEqual(one.body, view);
    assert.equal((await server.admin('GET', '/api/logs/nope')).status, 404);
  });

  test('filter and sort over the log fields, PocketBase names under data. too', async () => {
    await server.request('POST', '/api/collections/notes/records?marker=f1', { body: { title: 'x' } });
    await server.request('POST', '/api/collections/notes/records?marker=f2', { body: { title: 'x' } });
    const both = await logged('status >= 400 && method = "POST" && url ~ "marker=f"', 2);
    assert.equal(both.items.length, 2);
    assert.ok(both.items.every((l: any) => l.data.status >= 400 && l.data.method === 'POST'));
    const viaData = await logged('data.status >= 400 && data.method = "POST" && data.url ~ "marker=f"', 2);
    assert.deepEqual(viaData.items.map((l: any) => l.id), both.items.map((l: any) => l.id));
    // Newest first by default; `sort` takes the same names.
    assert.ok(both.items[0].created >= both.items[1].created);
    const ascending = await server.admin('GET', `/api/logs?filter=${encodeURIComponent('url ~ "marker=f"')}&sort=created`);
    assert.deepEqual(ascending.body.items.map((l: any) => l.id), both.items.map((l: any) => l.id).reverse());
    const byStatus = await server.admin('GET', `/api/logs?sort=-status,-execTime&perPage=5`);
    assert.equal(byStatus.status, 200);
    const statuses = byStatus.body.items.map((l: any) => l.data.status);
    assert.deepEqual(statuses, [...statuses].sort((a, b) => b - a));

    for (const bad of ['status >', 'passwordHash = 1', 'nope.x = 1', '@collection.users.email != ""']) {
      const res = await server.admin('GET', `/api/logs?filter=${encodeURIComponent(bad)}`);
      assert.equal(res.status, 400, `${bad}: ${res.text}`);
      assert.equal(res.body.code, 400);
    }
    assert.equal((await server.admin('GET', '/api/logs?sort=nope')).status, 400);
    const skip = await server.admin('GET', '/api/logs?skipTotal=1&perPage=1');
    assert.equal(skip.body.totalItems, -1);
    assert.equal(skip.body.items.length, 1);
  });

  test('stats count requests per hour, with the same filter', async () => {
    for (let i = 0; i < 3; i++) await server.request('GET', `/api/health?marker=stats`);
    const list = await logged('url = "/api/health?marker=stats"', 3);
    const stats = await server.admin('GET', `/api/logs/stats?filter=${encodeURIComponent('url = "/api/health?marker=stats"')}`);
    assert.equal(stats.status, 200);
    assert.equal(stats.body.reduce((n: number, s: any) => n + s.total, 0), list.totalItems);
    for (const s of stats.body) assert.match(s.date, /^\d{4}-\d\d-\d\d \d\d:00:00\.000Z$/);
    const hour = `${list.items[0].created.slice(0, 13)}:00:00.000Z`;
    assert.ok(stats.body.some((s: any) => s.date === hour));
    const all = await server.admin('GET', '/api/logs/stats');
    const total = (await server.admin('GET', '/api/logs?perPage=1')).body.totalItems;
    // Requests made meanwhile (these two) may have been written in between.
    assert.ok(all.body.reduce((n: number, s: any) => n + s.total, 0) <= total);
    assert.equal((await server.admin('GET', '/api/logs/stats?filter=((')).status, 400);
  });

  test('administrators only', async () => {
    for (const p of ['/api/logs', '/api/logs/stats', '/api/logs/x']) {
      assert.equal((await server.request('GET', p)).status, 401);
      assert.equal((await server.request('GET', p, { token: user.token })).status, 403);
    }
  });

  test('kept in a database of its own (logs.db, or the instance schema), not in any data database', async () => {
    const main = await databaseOf(server);
    assert.deepEqual((await tablesOf(main)).filter((t) => t.includes('request_logs')), []);
    assert.ok((await tablesOf(server.services.registry.logs)).includes('_request_logs'));
    assert.ok((await storedLogRows(server.dir)).length > 0);
    if (!onPostgres) assert.ok(existsSync(path.join(server.dir, 'logs.db')));
  });

  test('old entries are pruned after CAIRN_LOG_DAYS', async () => {
    // A store of its own: its ids follow the times it is given (the server's are past that time).
    const store = new LogStore(server.services.registry.logs);
    const old = Date.now() - 8 * 86_400_000;
    await store.insert([entry({ time: old, url: '/api/health?marker=old' })]);
    assert.equal((await server.admin('GET', `/api/logs?filter=${encodeURIComponent('url ~ "marker=old"')}`)).body.totalItems, 1);
    assert.equal(await server.services.requestLogs.prune(), 1);
    assert.equal((await server.admin('GET', `/api/logs?filter=${encodeURIComponent('url ~ "marker=old"')}`)).body.totalItems, 0);
    // Recent entries stay.
    assert.ok((await server.admin('GET', '/api/logs?perPage=1')).body.totalItems > 0);
  });
});

describe('secrets never reach the request log', () => {
  let server: TestServer;
  after(() => server?.close());

  test('sign-ins, API keys, password resets, file tokens and OAuth2 codes leave no trace in any log row', async () => {
    server = await startServer();
    const secrets: string[] = [server.adminToken, 'admin-password-1'];
    const password = 'log-user-password-1';
    const newPassword = 'log-user-password-2';
    secrets.push(password, newPassword);
    const user = await createUser(server, 'secret-log@example.com', password);
    secrets.push(user.token);
    await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'secret-log@example.com', password } });
    await server.request('POST', '/api/admins/auth-with-password', { body: { identity: 'admin@example.com', password: 'wrong-admin-password' } });
    secrets.push('wrong-admin-password');

    const key = await server.admin('POST', '/api/keys', { body: { name: 'k', roles: ['admin'] } });
    secrets.push(key.body.key, key.body.token);
    assert.equal((await server.request('GET', '/api/collections', { token: key.body.key })).status, 200);
    assert.equal((await server.request('GET', '/api/collections', { token: key.body.token })).status, 200);
    const rotated = await server.admin('POST', `/api/keys/${key.body.id}/rotate`);
    secrets.push(rotated.body.key, rotated.body.token);
    // A client that puts credentials in the query string still gets them redacted.
    await server.request('GET', `/api/collections?token=${rotated.body.token}&api_key=${rotated.body.key}&access_token=${user.token}`);

    await createCollection(server, { name: 'docs', listRule: '', viewRule: '', fields: [{ name: 'file', type: 'file', options: { protected: true, maxSelect: 1 } }] });
    const form = new FormData();
    form.append('file', new Blob(['secret file']), 'a.txt');
    const doc = await server.admin('POST', '/api/collections/docs/records', { raw: form });
    const fileToken = (await server.request('POST', '/api/files/token', { token: user.token })).body.token as string;
    secrets.push(fileToken);
    await server.request('GET', `/api/files/docs/${doc.body.id}/${doc.body.file}?token=${fileToken}`);
    await server.request('GET', `/api/auth/oauth2-login?provider=nope&code=oauth-code-secret-1&codeVerifier=oauth-verifier-secret-1&redirectUrl=http://localhost/cb`);
    secrets.push('oauth-code-secret-1', 'oauth-verifier-secret-1');

    assert.equal((await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: 'secret-log@example.com' } })).status, 204);
    const mailDir = path.join(server.dir, 'mail');
    const file = await waitFor(() => existsSync(mailDir) && readdirSync(mailDir).find((f) => f.endsWith('.eml')), { what: 'the reset mail' });
    const resetToken = tokenFrom({ text: decodeQuotedPrintable(readFileSync(path.join(mailDir, file), 'utf8')) });
    secrets.push(resetToken);
    const reset = await server.request('POST', '/api/collections/users/confirm-password-reset', { body: { token: resetToken, password: newPassword, passwordConfirm: newPassword } });
    assert.equal(reset.status, 204, reset.text);
    const relogin = await server.request('POST', '/api/auth/login', { body: { email: 'secret-log@example.com', password: newPassword } });
    secrets.push(relogin.body.token);

    // Stored hashes and token keys too.
    const system = server.services.registry.system;
    const main = await server.services.registry.get('main');
    for (const r of await system.all<any>('SELECT "passwordHash", "tokenKey" FROM _admins')) secrets.push(r.passwordHash, r.tokenKey);
    for (const r of await main.all<any>('SELECT "passwordHash", "tokenKey" FROM users')) secrets.push(r.passwordHash, r.tokenKey);
    for (const r of await main.all<any>('SELECT "keyHash", "tokenKey" FROM _api_keys')) secrets.push(r.keyHash, r.tokenKey);

    await server.request('GET', '/api/health?marker=last');
    await waitFor(async () => (await logRows(server)).some((r) => r.url === '/api/health?marker=last'), { what: 'the last request in the log' });
    const rows = await logRows(server);
    assert.ok(rows.some((r) => String(r.url).includes('token=[redacted]')), 'the query-string token was logged redacted');
    assert.ok(rows.some((r) => String(r.url).startsWith('/api/auth/oauth2-login') && String(r.url).includes('code=[redacted]')));
    const leaks: string[] = [];
    for (const row of rows) {
      const text = JSON.stringify(row);
      for (const s of secrets) if (typeof s === 'string' && s.length >= 8 && text.includes(s)) leaks.push(`${row.method} ${row.url}: ${s.slice(0, 8)}…`);
    }
    assert.deepEqual(leaks, []);
    // And through the API, as an administrator reads them.
    const listed = await server.admin('GET', '/api/logs?perPage=500');
    for (const s of secrets) if (s.length >= 8) assert.equal(listed.text.includes(s), false);
  });
});

// On the log database of the pass's driver, as a server opens it.
describe('request log writer', () => {
  let dir: string;
  let storage: Storage;
  let db: Database;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-logs-'));
    storage = await openStorage(dir);
    db = await storage.logs();
    await applySchemaSteps(db, logSteps);
  });
  after(async () => {
    await storage?.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  test('a full buffer drops new entries and counts them instead of growing', async () => {
    const writer = new RequestLogWriter(new DatabaseLogSink(new LogStore(db)), { maxBuffered: 10, batchSize: 1000, flushMs: 60_000 });
    for (let i = 0; i < 25; i++) writer.push(entry({ url: `/api/health?i=${i}` }));
    assert.equal(writer.dropped, 15);
    await writer.close();
    assert.equal(writer.written, 10);
    const rows = await db.all<{ url: string }>("SELECT url FROM _request_logs WHERE url LIKE '/api/health?i=%' ORDER BY id");
    assert.deepEqual(rows.map((r) => r.url), Array.from({ length: 10 }, (_, i) => `/api/health?i=${i}`));
    // Closed: nothing more is taken.
    writer.push(entry());
    assert.equal(writer.written, 10);
  });

  test('a batch size of entries is written without waiting for the timer', async () => {
    const writer = new RequestLogWriter(new DatabaseLogSink(new LogStore(db)), { batchSize: 100, flushMs: 60_000 });
    for (let i = 0; i < 100; i++) writer.push(entry({ url: '/api/health?batch' }));
    await waitFor(() => writer.written === 100, { what: 'the batch to be written' });
    await writer.close();
  });

  test('the SQLite thread writes batches in order, with time-ordered ids, and closes its connection', { skip: skipOn('postgres', "SQLite's log file and its writer thread") }, async () => {
    const writer = new RequestLogWriter(SqliteThreadLogSink.open(path.join(dir, 'logs.db'))!, { batchSize: 150, flushMs: 60_000 });
    for (let i = 0; i < 300; i++) writer.push(entry({ url: `/api/health?thread=${i}`, status: i % 2 === 0 ? 200 : 404 }));
    await writer.close();
    assert.equal(writer.written, 300);
    const rows = await db.all<{ url: string; level: number }>("SELECT url, level FROM _request_logs WHERE url LIKE '/api/health?thread=%' ORDER BY id");
    assert.deepEqual(rows.map((r) => r.url), Array.from({ length: 300 }, (_, i) => `/api/health?thread=${i}`));
    assert.deepEqual(rows.slice(0, 2).map((r) => r.level), [0, 8]);
    // Closed: the file has no other writer left, so this process's connection writes at once.
    await db.run("DELETE FROM _request_logs WHERE url LIKE '/api/health?thread=%'");
  });

  test('a batch that cannot be written is retried, and only dropped (counted, reported) when close gives up', async () => {
    // Storage of its own, closed: every write fails.
    const closedDir = mkdtempSync(path.join(tmpdir(), 'cairn-logs-closed-'));
    const closedStorage = await openStorage(closedDir);
    const closed = await closedStorage.logs();
    await applySchemaSteps(closed, logSteps);
    await closedStorage.close();
    rmSync(closedDir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(closedDir);
    const errors: unknown[] = [];
    const writer = new RequestLogWriter(new DatabaseLogSink(new LogStore(closed)), { onError: (err) => errors.push(err), flushMs: 10, closeAttempts: 3 });
    writer.push(entry());
    writer.push(entry());
    await writer.close();
    assert.equal(writer.dropped, 2);
    assert.ok(errors.length >= 3, `${errors.length} attempts`);
  });

  test('a failed batch goes back to the buffer and is written once the store answers again', async () => {
    const store = new LogStore(db);
    let failing = 2;
    const sink = {
      write: (entries: readonly RequestLogEntry[]) => (failing-- > 0 ? Promise.reject(new Error('database restarting')) : store.insert(entries)),
      close: async () => {},
    };
    const writer = new RequestLogWriter(sink as never, { flushMs: 5, batchSize: 1000 });
    for (let i = 0; i < 5; i++) writer.push(entry({ url: `/api/health?retry=${i}` }));
    await waitFor(() => writer.written === 5, { what: 'the retried batch to be written' });
    writer.push(entry({ url: '/api/health?retry=5' }));
    await writer.close();
    assert.equal(writer.dropped, 0);
    assert.equal(writer.retried, 2);
    const rows = await db.all<{ url: string }>("SELECT url FROM _request_logs WHERE url LIKE '/api/health?retry=%' ORDER BY id");
    assert.deepEqual(rows.map((r) => r.url), Array.from({ length: 6 }, (_, i) => `/api/health?retry=${i}`));
  });

  test('two writers on one database (two nodes) never lose entries to an id collision', async () => {
    // Same lane and same milliseconds: the worst case, which a random lane makes rare.
    const a = new LogStore(db, new LogIds(3));
    const b = new LogStore(db, new LogIds(3));
    const time = Date.now();
    const batch = (node: string) => Array.from({ length: 20 }, (_, i) => entry({ time, url: `/api/health?node=${node}&i=${i}` }));
    await a.insert(batch('a'));
    await b.insert(batch('b'));
    const rows = await db.all<{ id: number }>("SELECT id FROM _request_logs WHERE url LIKE '/api/health?node=%'");
    assert.equal(rows.length, 40);
    assert.equal(new Set(rows.map((r) => Number(r.id))).size, 40);
  });
});

describe('request logs at shutdown and when off', () => {
  test('what is buffered is written when the server closes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-logs-'));
    try {
      const server = await startServer({ dir });
      for (let i = 0; i < 5; i++) await server.request('GET', `/api/health?marker=close${i}`);
      await server.close();
      const urls = (await storedLogRows(dir)).map((r) => r.url);
      for (let i = 0; i < 5; i++) assert.ok(urls.includes(`/api/health?marker=close${i}`), `request ${i} is in the log`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
      if (onPostgres) await dropDatabaseFor(dir);
    }
  });

  test('CAIRN_REQUEST_LOGS=off records nothing, and the log can still be read', async () => {
    const server = await startServer({ env: { CAIRN_REQUEST_LOGS: 'off' } });
    try {
      for (let i = 0; i < 3; i++) await server.request('GET', '/api/health');
      const res = await server.admin('GET', '/api/logs');
      assert.equal(res.status, 200);
      assert.equal(res.body.totalItems, 0);
    } finally {
      await server.close();
    }
  });
});
