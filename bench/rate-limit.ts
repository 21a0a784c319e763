// `node --import tsx bench/rate-limit.ts`: what the rate limits' counters cost a request on
// PostgreSQL. Starts Cairn processes on one PostgreSQL database (BENCH_POSTGRES, by default the local
// server; a database of its own, dropped at the end), one per way of counting, and drives view-by-id
// against each in alternating rounds (bench/lib/load.ts):
//
//   off        CAIRN_RATE_LIMIT=off
//   memory     the global limit in the node's memory (the default on PostgreSQL without Redis)
//   postgres   the global limit in `cairn_system._rate_limits` too (CAIRN_RATE_LIMIT_SHARE_GLOBAL=on)
//   redis      every limit in Redis (BENCH_REDIS, by default redis://127.0.0.1:6379; skipped if unset
//              and unreachable)
//
// Every request comes from 127.0.0.1, so the shared global limit updates one row (or key) for all of
// them: the worst case, a single busy client. The global limit is raised so nothing is refused.
// Environment as bench/run.ts: BENCH_DURATION (default 6), BENCH_ROUNDS (2), BENCH_WARMUP (1),
// BENCH_CONNECTIONS (50).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createPosts, post } from './cases/posts.ts';
import { compare, type Target } from './lib/load.ts';
import { type RunningServer, startProcess } from './lib/servers.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN = { identity: 'bench@example.com', password: 'bench-admin-password' };
const NAME = 'bench_view';

function numberEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number(raw);
}

async function reachable(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = createConnection({ host: hostname, port: Number(port || 6379) }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

async function main(): Promise<void> {
  const server = process.env.BENCH_POSTGRES || 'postgres://postgres@127.0.0.1:5432/postgres';
  const redis = process.env.BENCH_REDIS || 'redis://127.0.0.1:6379';
  const database = `cairn_bench_rl_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  const url = new URL(server);
  url.pathname = `/${database}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-rl-'));
  const servers: RunningServer[] = [];
  try {
    const common = {
      CAIRN_DATABASE_URL: url.toString(),
      CAIRN_LOG_LEVEL: 'warn',
      CAIRN_RATE_LIMIT_GLOBAL: '1000000',
      CAIRN_ADMIN_EMAIL: ADMIN.identity,
      CAIRN_ADMIN_PASSWORD: ADMIN.password,
      CAIRN_REQUEST_LOGS: 'off',
      NODE_ENV: 'production',
    };
    const variants: Array<[string, Record<string, string>]> = [
      ['off', { CAIRN_RATE_LIMIT: 'off' }],
      ['memory', {}],
      ['postgres', { CAIRN_RATE_LIMIT_SHARE_GLOBAL: 'on' }],
    ];
    if (await reachable(redis)) variants.push(['redis', { CAIRN_REDIS_URL: redis, CAIRN_REDIS_PREFIX: `bench-${randomBytes(4).toString('hex')}:` }]);
    for (const [name, env] of variants) {
      servers.push(await startProcess([path.join(ROOT, 'bin/cairn.js'), 'serve', '--dir', path.join(dir, name), '--host', '127.0.0.1'], { ...common, ...env }, '/api/health'));
    }

    const first = servers[0].url;
    const login = await fetch(`${first}/api/admins/auth-with-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    const token = ((await login.json()) as { token: string }).token;
    const call = async (method: string, p: string, body?: unknown) => {
      const res = await fetch(first + p, { method, headers: { authorization: token, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<any>;
    };
    await createPosts({ admin: call }, NAME);
    const ids: string[] = [];
    for (let i = 0; i < 200; i++) ids.push((await call('POST', `/api/collections/${NAME}/records`, post(i))).id);

    const targets: Target[] = servers.map((s) => ({
      url: s.url,
      request: { method: 'GET', paths: ids.map((id) => `/api/collections/${NAME}/records/${id}`), expectStatus: 200 },
      cpuSeconds: s.cpuSeconds,
    }));
    const results = await compare(targets, {
      connections: numberEnv('BENCH_CONNECTIONS', 50),
      duration: numberEnv('BENCH_DURATION', 6),
      rounds: numberEnv('BENCH_ROUNDS', 2),
      warmup: numberEnv('BENCH_WARMUP', 1),
      rate: 0,
    });
    const lines = ['| global limit counted | req/s | vs off | p99 ms | CPU µs/req (Cairn) | failures |', '| --- | ---: | ---: | ---: | ---: | ---: |'];
    results.forEach((m, i) => {
      lines.push(`| ${variants[i][0]} | ${m.rps.toFixed(0)} | ${((m.rps / results[0].rps) * 100).toFixed(0)}% | ${m.p99.toFixed(0)} | ${m.cpuUs?.toFixed(0) ?? '?'} | ${m.failures} |`);
    });
    lines.push('', `view-by-id on PostgreSQL, one client address; load average ${os.loadavg()[0].toFixed(1)} at the end.`);
    process.stdout.write(`${lines.join('\n')}\n`);
  } finally {
    for (const s of servers.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    await admin.end();
  }
}

await main();
