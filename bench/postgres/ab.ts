// A/B of two Cairn builds on PostgreSQL beside the bare baseline, measured in the same rounds:
// AB_BEFORE=<root of another checkout, built> node --import tsx bench/postgres/ab.ts pg-create pg-view-by-id pg-list-100k
// (wrap in flock /tmp/bench.lock). Prints CPU µs per request of each and the ratios to the baseline.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { compare, type LoadOptions, type Measurement } from '../lib/load.ts';
import { type RunningServer, startProcess } from '../lib/servers.ts';
import { type PgCase, PG_CASES } from './cases.ts';
import { fmt, pgRequest, POOL, preparePgData, ROOT, startPgCairn } from './run.ts';


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
      const cairn = await startPgCairn(root, dir, url.toString(), { CAIRN_BUILD_CHECK: 'off' });
      servers.push(cairn);
      const ids = await preparePgData(cairn.url, url.toString(), selected);
      sides[side] = { url: cairn.url, cpuSeconds: cairn.cpuSeconds, ids, dbUrl: url.toString() };
    }
    const baseline = await startProcess(['--import', 'tsx', path.join(ROOT, 'bench/postgres/baseline.ts'), '--url', sides.after.dbUrl, '--pool', String(POOL), '--cases', selected.map((c) => c.name).join(',')], {}, '/api/health');
    servers.push(baseline);
    console.log('| case | CPU µs/req baseline | before | after | before/baseline | after/baseline |');
    for (const c of selected) {
      const req = (ids: Map<PgCase, string[]>) => pgRequest(c, ids);
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
