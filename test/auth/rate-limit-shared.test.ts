import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Redis } from 'ioredis';
import { RATE_LIMITS } from '../../src/http/plugins/rate-limit.ts';
import { DatabaseCounters } from '../../src/ratelimit/database.ts';
import { startNodes } from '../helpers/nodes.ts';
import { onPostgres, skipOn } from '../helpers/postgres.ts';
import { freePort } from '../helpers/process.ts';
import { REDIS_URL, redisNamespace } from '../helpers/redis.ts';
import { ownConnectionsTo } from '../helpers/tcp.ts';
import { waitFor } from '../helpers/wait.ts';
import { type Reply, request, startServer, type StartOptions, type TestServer } from '../helpers/server.ts';

/** A sign-in that fails validation before any hashing: cheap, and still counted by the limits. */
function blankLogin(server: TestServer, email: string, ip: string) {
  return request(server.url, 'POST', '/api/auth/login', { body: { email, password: '' }, headers: { 'x-forwarded-for': ip } });
}

function assertLimited(res: Reply) {
  assert.equal(res.status, 429, res.text);
  assert.deepEqual(res.body, { status: 429, code: 429, message: 'Too many requests.', data: {} });
  const retryAfter = Number(res.headers.get('retry-after'));
  assert.ok(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, `Retry-After ${res.headers.get('retry-after')}`);
}

/** Behind a trusted proxy (loopback), so each test picks the client address its requests come from. */
const ON = { CAIRN_RATE_LIMIT: 'on', CAIRN_TRUST_PROXY: '127.0.0.1' };

/**
 * Three servers: nodes of one PostgreSQL database, or, on the SQLite pass (with Redis only), three
 * separate instances whose one shared thing is the Redis prefix.
 */
async function threeServers(options: StartOptions): Promise<{ nodes: TestServer[]; close(): Promise<void> }> {
  if (onPostgres) return startNodes(3, options);
  const nodes: TestServer[] = [];
  for (let i = 0; i < 3; i++) nodes.push(await startServer(options));
  return { nodes, close: async () => void (await Promise.all(nodes.map((n) => n.close()))) };
}

/** The sign-in limits, counted across the three servers, whatever the counters are. */
function signInLimitsAreShared(servers: () => TestServer[]) {
  test('one identity gets its limit across the nodes, not per node', async () => {
    const nodes = servers();
    for (let i = 0; i < RATE_LIMITS.perIdentity.max; i++) {
      const res = await blankLogin(nodes[i % 3], 'Target@example.com', `203.0.113.${i}`);
      assert.equal(res.status, 400, `attempt ${i + 1} on node ${(i % 3) + 1}: ${res.text}`);
    }
    for (const node of nodes) assertLimited(await blankLogin(node, 'target@example.com', '203.0.113.200'));
  });

  test('one client address gets the sensitive limit across the nodes', async () => {
    const nodes = servers();
    for (let i = 0; i < RATE_LIMITS.sensitivePerIp.max; i++) {
      const res = await blankLogin(nodes[i % 3], `user-${i}@example.com`, '198.51.100.7');
      assert.equal(res.status, 400, `attempt ${i + 1}: ${res.text}`);
    }
    assertLimited(await blankLogin(nodes[1], 'one-more@example.com', '198.51.100.7'));
    // Another address still has its whole budget.
    assert.equal((await blankLogin(nodes[2], 'one-more@example.com', '198.51.100.8')).status, 400);
  });
}

/** The global limit of `max` requests, counted across the three servers. */
async function globalLimitIsShared(nodes: TestServer[], max: number, ip: string) {
  for (let i = 0; i < max; i++) {
    const res = await request(nodes[i % 3].url, 'GET', '/api/health', { headers: { 'x-forwarded-for': ip } });
    assert.equal(res.status, 200, `request ${i + 1}`);
  }
  for (const node of nodes) assertLimited(await request(node.url, 'GET', '/api/health', { headers: { 'x-forwarded-for': ip } }));
}

describe('rate limits counted in PostgreSQL', { skip: skipOn('sqlite', 'several nodes share data only through PostgreSQL') }, () => {
  let cluster: { nodes: TestServer[]; close(): Promise<void> };
  before(async () => {
    cluster = await startNodes(3, { env: { ...ON, CAIRN_RATE_LIMIT_GLOBAL: '40' }, noAdmin: true });
  });
  after(() => cluster?.close());

  signInLimitsAreShared(() => cluster.nodes);

  test('the global limit counts on each node by default', async () => {
    const ip = '192.0.2.10';
    for (let i = 0; i < 40 * 3; i++) {
      const res = await request(cluster.nodes[i % 3].url, 'GET', '/api/health', { headers: { 'x-forwarded-for': ip } });
      assert.equal(res.status, 200, `request ${i + 1}`);
    }
    assertLimited(await request(cluster.nodes[0].url, 'GET', '/api/health', { headers: { 'x-forwarded-for': ip } }));
  });

  test('ended windows are pruned from the table; a hit after its window starts a new one', async () => {
    const db = cluster.nodes[0].services.registry.system;
    const rows = async () => Number((await db.get<{ n: number | string }>('SELECT COUNT(*) AS n FROM _rate_limits'))!.n);
    assert.ok((await rows()) > 0);
    const counters = new DatabaseCounters(db);
    try {
      assert.equal((await counters.hit('probe', 60_000)).count, 1);
      assert.equal((await counters.hit('probe', 60_000)).count, 2);
      // Every window ends now.
      await db.run('UPDATE _rate_limits SET reset_at = ?', [new Date(Date.now() - 1).toISOString()]);
      assert.ok((await counters.prune()) > 0);
      assert.equal(await rows(), 0);
      assert.equal((await counters.hit('probe', 60_000)).count, 1);
      await db.run('UPDATE _rate_limits SET reset_at = ?', [new Date(Date.now() - 1).toISOString()]);
      // Not pruned yet: the hit itself starts the new window.
      const hit = await counters.hit('probe', 60_000);
      assert.equal(hit.count, 1);
      assert.ok(hit.ttlMs > 59_000 && hit.ttlMs <= 60_000, String(hit.ttlMs));
    } finally {
      await counters.close();
    }
  });
});

describe('the global limit shared through PostgreSQL', { skip: skipOn('sqlite', 'several nodes share data only through PostgreSQL') }, () => {
  let cluster: { nodes: TestServer[]; close(): Promise<void> };
  before(async () => {
    cluster = await startNodes(3, { env: { ...ON, CAIRN_RATE_LIMIT_GLOBAL: '40', CAIRN_RATE_LIMIT_SHARE_GLOBAL: 'on' }, noAdmin: true });
  });
  after(() => cluster?.close());

  test('N requests in all across the three nodes, then 429 on each', () => globalLimitIsShared(cluster.nodes, 40, '192.0.2.20'));
});

describe('rate limits counted in Redis', () => {
  const redis = redisNamespace();
  let cluster: { nodes: TestServer[]; close(): Promise<void> };
  before(async () => {
    cluster = await threeServers({ env: { ...ON, ...redis.env, CAIRN_RATE_LIMIT_GLOBAL: '40' }, noAdmin: true });
  });
  after(async () => {
    await cluster?.close();
    await redis.flush();
  });

  signInLimitsAreShared(() => cluster.nodes);

  test('the global limit too: N requests in all, then 429 on each node', () => globalLimitIsShared(cluster.nodes, 40, '192.0.2.30'));

  test('the connections to Redis send TCP keepalive probes after 30 s', { skip: process.platform !== 'linux' && 'reads /proc/net/tcp' }, async () => {
    // Every Cairn connected to this Redis names its connection; the address Redis sees is its local one.
    // The nodes run in this process: their connections are those of its sockets (test files running
    // beside this one start and stop servers of their own meanwhile).
    const client = new Redis(REDIS_URL, { lazyConnect: true });
    await client.connect();
    const redisPort = Number(new URL(REDIS_URL).port || 6379);
    let dues: Array<number | undefined> = [];
    try {
      // A connection with a command in flight runs its retransmission timer instead, for a moment.
      await waitFor(
        async () => {
          const list = (await client.call('CLIENT', 'LIST')) as string;
          const own = ownConnectionsTo(redisPort);
          dues = list
            .split('\n')
            .filter((line) => / name=cairn /.test(line))
            .map((line) => Number(/ addr=[^ ]*:(\d+) /.exec(line)?.[1]))
            .filter((port) => own.has(port))
            .map((port) => own.get(port));
          return dues.length >= cluster.nodes.length && dues.every((due) => due !== undefined && due <= 30);
        },
        { timeoutMs: 3000, what: 'keepalive timers on the nodes\' connections to Redis' },
      ).catch(() => undefined);
    } finally {
      client.disconnect();
    }
    assert.ok(dues.length >= cluster.nodes.length, `${dues.length} connections named cairn from this process`);
    // Probes after 30 s idle, not the operating system's default of two hours (ioredis's keepAlive 0).
    for (const due of dues) assert.ok(due !== undefined && due <= 30, `keepalive due in ${due} s`);
  });

  test('keys live under the prefix, with no account address in them', async () => {
    const keys = await redis.keys();
    assert.ok(keys.length > 0);
    for (const key of keys) {
      assert.ok(key.startsWith(`${redis.prefix}rate-limit:`), key);
      assert.doesNotMatch(key, /@example\.com/i);
    }
  });
});

describe('rate limits with Redis out of reach', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ env: { ...ON, CAIRN_REDIS_URL: `redis://127.0.0.1:${await freePort()}`, CAIRN_RATE_LIMIT_GLOBAL: '40' }, noAdmin: true });
  });
  after(() => server?.close());

  test('count in the node’s memory: requests are served, and still limited', async () => {
    for (let i = 0; i < RATE_LIMITS.perIdentity.max; i++) assert.equal((await blankLogin(server, 'alone@example.com', '203.0.113.99')).status, 400);
    assertLimited(await blankLogin(server, 'alone@example.com', '203.0.113.99'));
  });
});
