// A/B of two Cairn builds on PostgreSQL beside the bare baseline, measured in the same rounds:
// AB_BEFORE=<root of another checkout, built> node --import tsx bench/postgres/ab.ts pg-create pg-view-by-id pg-list-100k
// (wrap in flock /tmp/bench.lock). Prints CPU µs per request of each and the ratios to the baseline.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { compare, type LoadOptions, type MeasuredCase, type Measurement } from '../lib/load.ts';
import { type RunningServer, startProcess } from '../lib/servers.ts';
import { post, postsCollection } from '../cases/posts.ts';
import { type PgCase, PG_CASES } from './cases.ts';
import { ADMIN, fmt, LIST_PAGES, LIST_RECORDS, POOL, ROOT, VIEW_RECORDS } from './run.ts';


/**
 * Runs the PostgreSQL cases (`BENCH_POSTGRES`, default the local server): a fresh database, Cairn on
 * it with a pool of 10, the baseline with the same pool on the same tables. Returns the report's lines.
 */

async function main(): Promise<void> {
  const names = process.argv.slice(2);
  const load: LoadOptions = { connections: 50, duration: Number(process.env.BENCH_DURATION ?? 6), rounds: Number(process.env.BENCH_ROUNDS ?? 4), warmup: Number(process.env.BENCH_WARMUP ?? 2), rate: 0 } as LoadOptions;
  const selected = PG_CASES.filter((c) => names.includes(c.name));
  const serverUrl = 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const roots = { before: process.env.AB_BEFORE!, after: ROOT };
  const servers: RunningServer[] = [];
  const dbs: string[] = [];
  const dirs: string[] = [];
  try {
    const sides: Record<string, { url: string; cpuSeconds: () => number | undefined; ids: Map<PgCase, string[]>; dbUrl: string }> = {};
    for (const [side, root] of Object.entries(roots)) {
      const database = `cairn_ab_${randomBytes(4).toString('hex')}`;
      dbs.push(database);
      await admin.query(`CREATE DATABASE "${database}"`);
      const url = new URL(serverUrl);
      url.pathname = `/${database}`;
      const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-ab-pg-'));
      dirs.push(dir);
      const cairn = await startProcess([path.join(root, 'bin/cairn.js'), 'serve', '--dir', dir, '--host', '127.0.0.1'], {
        CAIRN_DATABASE_URL: url.toString(), CAIRN_PG_POOL_SIZE: String(POOL), CAIRN_LOG_LEVEL: 'info', CAIRN_RATE_LIMIT: 'off', CAIRN_BUILD_CHECK: 'off',
        CAIRN_ADMIN_EMAIL: ADMIN.identity, CAIRN_ADMIN_PASSWORD: ADMIN.password, NODE_ENV: 'production',
      }, '/api/health');
      servers.push(cairn);
      const login = (await (await fetch(`${cairn.url}/api/admins/auth-with-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()) as { token: string };
      const call = async (method: string, p: string, body?: unknown) => {
        const res = await fetch(cairn.url + p, { method, headers: { authorization: login.token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
        if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
        return res.json() as Promise<any>;
      };
      const data = new pg.Client({ connectionString: url.toString(), options: '-c search_path=main' });
      await data.connect();
      const ids = new Map<PgCase, string[]>();
      for (const c of selected) {
        await call('POST', '/api/collections', postsCollection(c.collection));
        if (c.kind === 'view') {
          const made: string[] = [];
          for (let i = 0; i < VIEW_RECORDS; i++) made.push((await call('POST', `/api/collections/${c.collection}/records`, post(i))).id);
          ids.set(c, made);
        } else if (c.kind === 'list') {
          await data.query(`INSERT INTO "${c.collection}" (id, created, updated, title, body, views, published)
            SELECT substr(md5(i::text), 1, 15), to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'Post number ' || i, '<p>Body</p>', i % 1000, i % 2 = 0
            FROM generate_series(1, ${LIST_RECORDS}) AS i`);
          await data.query(`ANALYZE "${c.collection}"`);
        }
      }
      await data.end();
      sides[side] = { url: cairn.url, cpuSeconds: cairn.cpuSeconds, ids, dbUrl: url.toString() };
    }
    const baseline = await startProcess(['--import', 'tsx', path.join(ROOT, 'bench/postgres/baseline.ts'), '--url', sides.after.dbUrl, '--pool', String(POOL), '--cases', selected.map((c) => c.name).join(',')], {}, '/api/health');
    servers.push(baseline);
    console.log('| case | CPU µs/req baseline | before | after | before/baseline | after/baseline |');
    for (const c of selected) {
      const req = (ids: Map<PgCase, string[]>) => c.kind === 'create'
        ? { method: 'POST' as const, paths: [`/api/collections/${c.collection}/records`], body: post(7), expectStatus: 200 }
        : c.kind === 'view'
          ? { method: 'GET' as const, paths: ids.get(c)!.map((id) => `/api/collections/${c.collection}/records/${id}`), expectStatus: 200 }
          : { method: 'GET' as const, paths: Array.from({ length: LIST_PAGES }, (_, i) => `/api/collections/${c.collection}/records?page=${i + 1}&perPage=30&sort=-created`), expectStatus: 200 };
      const [b, k0, k1] = (await compare([
        { url: baseline.url, request: req(sides.after.ids), cpuSeconds: baseline.cpuSeconds },
        { url: sides.before.url, request: req(sides.before.ids), cpuSeconds: sides.before.cpuSeconds },
        { url: sides.after.url, request: req(sides.after.ids), cpuSeconds: sides.after.cpuSeconds },
      ], load)) as [Measurement, Measurement, Measurement];
      for (const m of [b, k0, k1]) if (m.failures > 0) throw new Error(`${c.name}: failures ${JSON.stringify(m.statuses)}`);
      console.log(`| ${c.name} | ${fmt(b.cpuUs!)} | ${fmt(k0.cpuUs!)} | ${fmt(k1.cpuUs!)} | ${(k0.cpuUs! / b.cpuUs!).toFixed(2)} | ${(k1.cpuUs! / b.cpuUs!).toFixed(2)} |  (req/s ${fmt(b.rps)} / ${fmt(k0.rps)} / ${fmt(k1.rps)})`);
    }
  } finally {
    for (const s of servers.reverse()) await s.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    for (const d of dbs) await admin.query(`DROP DATABASE IF EXISTS "${d}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}
await main();
