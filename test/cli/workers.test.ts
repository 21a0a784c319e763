import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { availableParallelism, tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { dropDatabaseFor, onPostgres, skipOn } from '../helpers/postgres.ts';
import { runCli, type SpawnedServer, spawnServer } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

const ADMIN = { email: 'workers@example.com', password: 'workers-password-1' };

/** A request on a connection of its own (fetch keeps connections alive, so one worker would answer all). */
function once(url: string, method: string, token?: string, body?: unknown): Promise<{ status: number; body: any }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const req = httpRequest(url, { method, agent: false, headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(data ? { 'content-type': 'application/json' } : {}) } }, (res) => {
      let text = '';
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(data);
  });
}

/** The worker processes a primary has forked now. */
function workersOf(pid: number): number[] {
  const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
  return text === '' ? [] : text.split(' ').map(Number);
}

describe('CAIRN_WORKERS: settings', () => {
  test('a number, or auto for one per core; above 1 only on PostgreSQL', () => {
    const pg = { CAIRN_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/cairn' };
    assert.equal(loadConfig({}, {}).workers, 1);
    assert.equal(loadConfig({}, { ...pg, CAIRN_WORKERS: '3' }).workers, 3);
    assert.equal(loadConfig({}, { ...pg, CAIRN_WORKERS: 'auto' }).workers, availableParallelism());
    // `auto` may stay in an environment shared with SQLite deployments: one process there.
    assert.equal(loadConfig({}, { CAIRN_WORKERS: 'auto' }).workers, 1);
    assert.throws(() => loadConfig({}, { CAIRN_WORKERS: '2' }), (err: unknown) => err instanceof ConfigError && /PostgreSQL/.test(err.message));
    for (const bad of ['0', 'many', '1.5', '257']) {
      assert.throws(() => loadConfig({}, { ...pg, CAIRN_WORKERS: bad }), (err: unknown) => err instanceof ConfigError && err.message.includes('CAIRN_WORKERS'), bad);
    }
  });

  test('a worker that cannot start stops the rest, and serve exits with its code', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-workers-'));
    try {
      // Nothing listens on port 1: the first worker's start fails once its wait for the database ends.
      const res = await runCli(['serve', '--dir', dir, '--port', '0'], { CAIRN_DATABASE_URL: 'postgres://postgres@127.0.0.1:1/cairn', CAIRN_DB_WAIT_MS: '0', CAIRN_WORKERS: '2', CAIRN_LOG_LEVEL: 'error' });
      assert.equal(res.code, 1, res.stdout + res.stderr);
      assert.match(res.stdout + res.stderr, /worker failed to start/);
      assert.match(res.stderr, /cannot use PostgreSQL/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('serve with two workers on one port', { skip: skipOn('sqlite', 'workers are nodes of a PostgreSQL instance') }, () => {
  let dir: string;
  let server: SpawnedServer;
  let token: string;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-workers-'));
    server = await spawnServer(dir, { CAIRN_WORKERS: '2', CAIRN_NODE_ID: 'pair', CAIRN_ADMIN_EMAIL: ADMIN.email, CAIRN_ADMIN_PASSWORD: ADMIN.password });
    const login = await once(`${server.url}/api/admins/auth-with-password`, 'POST', undefined, { identity: ADMIN.email, password: ADMIN.password });
    assert.equal(login.status, 200);
    token = login.body.token;
  });
  after(async () => {
    if (server.child.exitCode === null) await server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(path.resolve(dir));
  });

  /** Node ids answering health on fresh connections, until both workers have answered. */
  async function answeringNodes(): Promise<Set<string>> {
    const seen = new Set<string>();
    await waitFor(
      async () => {
        const res = await once(`${server.url}/api/health`, 'GET', token);
        assert.equal(res.status, 200);
        seen.add(res.body.data.node);
        return seen.size === 2;
      },
      { timeoutMs: 20_000, intervalMs: 0, what: 'both workers to answer' },
    );
    return seen;
  }

  test('both workers accept on the one port, each a node named after the given node id', async () => {
    await waitFor(() => workersOf(server.child.pid!).length === 2, { what: 'two workers' });
    assert.deepEqual([...(await answeringNodes())].sort(), ['pair.1', 'pair.2']);
  });

  test('a collection made through one worker takes records through either at once', async () => {
    const made = await once(`${server.url}/api/collections`, 'POST', token, { name: 'notes', type: 'base', fields: [{ name: 'title', type: 'text' }], createRule: '', listRule: '' });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    for (let i = 0; i < 20; i++) {
      const created = await once(`${server.url}/api/collections/notes/records`, 'POST', undefined, { title: `note ${i}` });
      assert.equal(created.status, 200, JSON.stringify(created.body));
    }
    const list = await once(`${server.url}/api/collections/notes/records?perPage=1`, 'GET');
    assert.equal(list.body.totalItems, 20);
  });

  test('a worker that dies is replaced, and the port keeps answering', async () => {
    const [victim] = workersOf(server.child.pid!);
    process.kill(victim!, 'SIGKILL');
    await waitFor(
      () => {
        const now = workersOf(server.child.pid!);
        return now.length === 2 && !now.includes(victim!);
      },
      { timeoutMs: 20_000, what: 'a new worker' },
    );
    // The replacement is the third worker forked; the survivor is one of the first two.
    const nodes = [...(await answeringNodes())].sort();
    assert.equal(nodes.length, 2);
    assert.match(nodes[0]!, /^pair\.[12]$/);
    assert.equal(nodes[1], 'pair.3');
  });

  test('SIGTERM stops every worker, and serve exits 0', async () => {
    const pids = workersOf(server.child.pid!);
    assert.equal(await server.kill('SIGTERM'), 0, server.output());
    for (const pid of pids) assert.equal(existsSync(`/proc/${pid}`), false, `worker ${pid} still running`);
  });
});
