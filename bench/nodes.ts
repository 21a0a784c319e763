// `npm run bench:nodes`: what a second node adds. One PostgreSQL database, two `cairn serve`
// processes on it; the same load (creates, then views) sent to one node, then spread over both, in
// alternating rounds (1, 2, 2, 1, …) so the machine's drift hits both set-ups alike. Reports requests
// per second, p99 and the nodes' CPU per request. Figures go to docs/scaling.md.
//
// Environment: BENCH_POSTGRES (server URL, default the local one), BENCH_DURATION (seconds measured per
// set-up and case, default 10), BENCH_ROUNDS (default 4), BENCH_CONNECTIONS (default 50, split over the
// nodes).
import autocannon from 'autocannon';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPosts, post } from './cases/posts.ts';
import { type RunningServer, startProcess } from './lib/servers.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN = { identity: 'bench@example.com', password: 'bench-admin-password' };
const VIEW_RECORDS = 1000;

function numberEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number`);
  return n;
}

const DURATION = numberEnv('BENCH_DURATION', 10);
const ROUNDS = numberEnv('BENCH_ROUNDS', 4);
const CONNECTIONS = numberEnv('BENCH_CONNECTIONS', 50);
const fmt = (n: number, digits = 0) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

interface Load {
  method: 'GET' | 'POST';
  paths: string[];
  body?: unknown;
}

interface Round {
  requests: number;
  seconds: number;
  p99: number;
  cpu: number;
  failures: number;
}

/** One round of load spread evenly over `nodes`, one autocannon instance per node, run together. */
async function round(nodes: RunningServer[], load: Load, seconds: number): Promise<Round> {
  const cpuBefore = nodes.map((n) => n.cpuSeconds() ?? 0);
  const body = load.body === undefined ? undefined : JSON.stringify(load.body);
  const results = await Promise.all(
    nodes.map((node) => {
      let next = 0;
      return autocannon({
        url: node.url,
        connections: Math.max(1, Math.round(CONNECTIONS / nodes.length)),
        duration: seconds,
        requests: [
          {
            method: load.method,
            headers: body === undefined ? {} : { 'content-type': 'application/json' },
            body,
            path: load.paths[0],
            ...(load.paths.length > 1 ? { setupRequest: (req) => ({ ...req, path: load.paths[next++ % load.paths.length] }) } : {}),
          },
        ],
      });
    }),
  );
  const cpu = nodes.reduce((sum, n, i) => sum + ((n.cpuSeconds() ?? 0) - cpuBefore[i]), 0);
  return {
    requests: results.reduce((n, r) => n + r.requests.total, 0),
    seconds: Math.max(...results.map((r) => r.duration)),
    // The slower node's p99 is the one a client behind a balancer meets.
    p99: Math.max(...results.map((r) => r.latency.p99)),
    cpu,
    failures: results.reduce((n, r) => n + r.errors + r.timeouts + r.non2xx, 0),
  };
}

function summary(rounds: Round[]) {
  const requests = rounds.reduce((n, r) => n + r.requests, 0);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  const p99s = rounds.map((r) => r.p99).sort((a, b) => a - b);
  return {
    rps: requests / seconds,
    p99: p99s[Math.floor(p99s.length / 2)],
    cpuUs: (rounds.reduce((n, r) => n + r.cpu, 0) * 1e6) / requests,
    failures: rounds.reduce((n, r) => n + r.failures, 0),
  };
}

async function main(): Promise<void> {
  const serverUrl = process.env.BENCH_POSTGRES || 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = `cairn_bench_nodes_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const servers: RunningServer[] = [];
  const dirs: string[] = [];
  try {
    const startNode = async (id: string) => {
      const dir = mkdtempSync(path.join(os.tmpdir(), `cairn-bench-${id}-`));
      dirs.push(dir);
      const node = await startProcess(
        [path.join(ROOT, 'bin/cairn.js'), 'serve', '--dir', dir, '--host', '127.0.0.1'],
        {
          CAIRN_DATABASE_URL: url.toString(),
          CAIRN_NODE_ID: id,
          CAIRN_PG_POOL_SIZE: '10',
          CAIRN_RATE_LIMIT: 'off',
          CAIRN_LOG_LEVEL: 'warn',
          CAIRN_ADMIN_EMAIL: ADMIN.identity,
          CAIRN_ADMIN_PASSWORD: ADMIN.password,
          NODE_ENV: 'production',
        },
        '/api/health',
      );
      servers.push(node);
      return node;
    };
    // Started one after the other: the first creates the system schema the second then finds.
    const a = await startNode('node-a');
    const b = await startNode('node-b');
    const { token } = (await (
      await fetch(`${a.url}/api/admins/auth-with-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })
    ).json()) as { token: string };
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(a.url + p, { method, headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    await createPosts({ admin: call }, 'posts');
    const ids: string[] = [];
    for (let i = 0; i < VIEW_RECORDS; i++) ids.push((await call('POST', '/api/collections/posts/records', post(i))).id);

    const cases: Array<[string, Load]> = [
      ['create', { method: 'POST', paths: ['/api/collections/posts/records'], body: post(7) }],
      ['view-by-id', { method: 'GET', paths: ids.map((id) => `/api/collections/posts/records/${id}`) }],
    ];
    const lines = [
      `| case | 1 node req/s | 2 nodes req/s | 2 / 1 | p99 ms 1 / 2 nodes | CPU µs/req 1 / 2 nodes |`,
      '| --- | ---: | ---: | ---: | ---: | ---: |',
    ];
    for (const [name, load] of cases) {
      process.stderr.write(`measuring ${name}…\n`);
      for (const setup of [[a], [a, b]]) await round(setup, load, 2); // warm-up, unmeasured
      const one: Round[] = [];
      const two: Round[] = [];
      const perRound = Math.max(1, DURATION / ROUNDS);
      for (let r = 0; r < ROUNDS; r++) {
        const order = r % 2 === 0 ? ['one', 'two'] : ['two', 'one'];
        for (const which of order) {
          if (which === 'one') one.push(await round([a], load, perRound));
          else two.push(await round([a, b], load, perRound));
        }
      }
      const s1 = summary(one);
      const s2 = summary(two);
      if (s1.failures + s2.failures > 0) throw new Error(`${name}: ${s1.failures + s2.failures} failed requests`);
      lines.push(`| ${name} | ${fmt(s1.rps)} | ${fmt(s2.rps)} | ${fmt(s2.rps / s1.rps, 2)}× | ${fmt(s1.p99)} / ${fmt(s2.p99)} | ${fmt(s1.cpuUs)} / ${fmt(s2.cpuUs)} |`);
    }
    console.log(lines.join('\n'));
    console.log(`\n${CONNECTIONS} connections in all, ${DURATION} s measured per set-up and case in ${ROUNDS} alternating rounds; PostgreSQL ${serverUrl.replace(/\/\/[^@]*@/, '//')}, ${os.cpus().length} cores shared by the nodes, the database and the load generator.`);
  } finally {
    for (const s of servers.reverse()) await s.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

await main();
