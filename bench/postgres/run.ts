import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { compare, type LoadOptions, type MeasuredCase, type Measurement } from '../lib/load.ts';
import { type RunningServer, serverNodeFlags, startProcess } from '../lib/servers.ts';
import type { BenchRequest } from '../case.ts';
import { post, postsCollection } from '../cases/posts.ts';
import { type PgCase, PG_CASES } from './cases.ts';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const ADMIN = { identity: 'bench@example.com', password: 'bench-admin-password' };
export const VIEW_RECORDS = 1000;
export const LIST_RECORDS = 100_000;
export const LIST_PAGES = 20;
export const POOL = 10;

export function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/**
 * Runs the PostgreSQL cases (`BENCH_POSTGRES`, default the local server): a fresh database, Cairn on
 * it with a pool of 10, the baseline with the same pool on the same tables. Returns the report's lines.
 */
export async function runPostgresCases(names: string[], load: LoadOptions, measured?: MeasuredCase[]): Promise<string[]> {
  const selected = PG_CASES.filter((c) => names.includes(c.name));
  if (selected.length === 0) return [];
  const serverUrl = process.env.BENCH_POSTGRES || 'postgres://postgres@127.0.0.1:5432/postgres';
  const database = `cairn_bench_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE "${database}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-pg-'));
  const servers: RunningServer[] = [];
  try {
    const cairn = await startPgCairn(ROOT, dir, url.toString());
    servers.push(cairn);
    const ids = await preparePgData(cairn.url, url.toString(), selected);
    const baseline = await startProcess(['--import', 'tsx', path.join(ROOT, 'bench/postgres/baseline.ts'), '--url', url.toString(), '--pool', String(POOL), '--cases', selected.map((c) => c.name).join(',')], {}, '/api/health');
    servers.push(baseline);

    const cairnRps = new Map<string, number>();
    const lines = [
      '| case | baseline (Fastify + pg) req/s | Cairn req/s | ratio | target | baseline p99 ms | Cairn p99 ms | CPU µs/req baseline / Cairn |',
      '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ];
    for (const c of selected) {
      process.stderr.write(`measuring ${c.name}…\n`);
      const request = pgRequest(c, ids);
      const [b, k] = (await compare(
        [
          { url: baseline.url, request, cpuSeconds: baseline.cpuSeconds },
          { url: cairn.url, request, cpuSeconds: cairn.cpuSeconds },
        ],
        load,
      )) as [Measurement, Measurement];
      for (const [who, m] of [['baseline', b], ['Cairn', k]] as const) {
        if (m.failures > 0) throw new Error(`${c.name}: ${who} gave ${m.failures} unexpected answers (${JSON.stringify(m.statuses)})`);
      }
      measured?.push({ name: c.name, baseline: b, cairn: k });
      const ratio = k.rps / b.rps;
      cairnRps.set(c.name, k.rps * (c.units ?? 1));
      lines.push(
        `| ${c.name}: ${c.description} | ${fmt(b.rps)} | ${fmt(k.rps)} | ${fmt(ratio * 100)}% | ≥ ${fmt(c.target * 100)}% (${ratio >= c.target ? 'met' : '**below**'}) | ${fmt(b.p99)} | ${fmt(k.p99)} | ${b.cpuUs === undefined ? '?' : fmt(b.cpuUs)} / ${k.cpuUs === undefined ? '?' : fmt(k.cpuUs)} |`,
      );
    }
    const single = cairnRps.get('pg-create');
    const batched = cairnRps.get('pg-batch');
    if (single && batched) {
      lines.push('', `pg-batch / pg-create, Cairn records per second: ${fmt(batched)} in batches of 50 against ${fmt(single)} created one by one: ${fmt(batched / single, 1)}× (target ≥ 5×: ${batched / single >= 5 ? 'met' : '**below**'}).`);
    }
    lines.push('', `PostgreSQL cases: both servers use a pool of ${POOL} connections to the same local PostgreSQL database; the server's own CPU is not in the per-request figures.`);
    return lines;
  } finally {
    for (const s of servers.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
    await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  }
}

/** Cairn from the build at `root` on the PostgreSQL database at `databaseUrl`, as the cases run it. */
export function startPgCairn(root: string, dir: string, databaseUrl: string, env: Record<string, string> = {}): Promise<RunningServer> {
  return startProcess(
    [...serverNodeFlags(), path.join(root, 'bin/cairn.js'), 'serve', '--dir', dir, '--host', '127.0.0.1'],
    {
      CAIRN_DATABASE_URL: databaseUrl,
      CAIRN_PG_POOL_SIZE: String(POOL),
      CAIRN_LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'info',
      CAIRN_RATE_LIMIT: 'off',
      CAIRN_ADMIN_EMAIL: ADMIN.identity,
      CAIRN_ADMIN_PASSWORD: ADMIN.password,
      NODE_ENV: 'production',
      ...env,
    },
    '/api/health',
  );
}

/**
 * Creates each case's collection through Cairn at `cairnUrl` and its records: 1,000 through the API
 * for a view, 100,000 in one statement for a list. Returns the view cases' record ids.
 */
export async function preparePgData(cairnUrl: string, databaseUrl: string, selected: readonly PgCase[]): Promise<Map<PgCase, string[]>> {
  const login = (await (await fetch(`${cairnUrl}/api/admins/auth-with-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).json()) as {
    token: string;
  };
  const call = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(cairnUrl + p, { method, headers: { authorization: login.token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${await res.text()}`);
    return res.json() as Promise<any>;
  };
  const data = new pg.Client({ connectionString: databaseUrl, options: '-c search_path=main' });
  await data.connect();
  const ids = new Map<PgCase, string[]>();
  try {
    for (const c of selected) {
      process.stderr.write(`preparing ${c.name}…\n`);
      await call('POST', '/api/collections', postsCollection(c.collection));
      if (c.kind === 'view') {
        const made: string[] = [];
        for (let i = 0; i < VIEW_RECORDS; i++) made.push((await call('POST', `/api/collections/${c.collection}/records`, post(i))).id);
        ids.set(c, made);
      } else if (c.kind === 'list') {
        // 100,000 rows written in one statement (through the API it would take minutes), with
        // distinct creation times as records made one after another have.
        await data.query(
          `INSERT INTO "${c.collection}" (id, created, updated, title, body, views, published)
            SELECT substr(md5(i::text), 1, 15), to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
              to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'Post number ' || i, '<p>Body</p>', i % 1000, i % 2 = 0
            FROM generate_series(1, ${LIST_RECORDS}) AS i`,
        );
        await data.query(`ANALYZE "${c.collection}"`);
      }
    }
  } finally {
    await data.end();
  }
  return ids;
}

/** The request a case sends (`ids`: the view cases' records). */
export function pgRequest(c: PgCase, ids: Map<PgCase, string[]>): BenchRequest {
  switch (c.kind) {
    case 'create':
      return { method: 'POST', paths: [`/api/collections/${c.collection}/records`], body: post(7), expectStatus: 200 };
    case 'batch':
      return {
        method: 'POST',
        paths: ['/api/batch'],
        body: { requests: Array.from({ length: c.units ?? 1 }, (_, i) => ({ method: 'POST', url: `/api/collections/${c.collection}/records`, body: post(i) })) },
        expectStatus: 200,
      };
    case 'view':
      return { method: 'GET', paths: ids.get(c)!.map((id) => `/api/collections/${c.collection}/records/${id}`), expectStatus: 200 };
    case 'list':
      return { method: 'GET', paths: Array.from({ length: LIST_PAGES }, (_, i) => `/api/collections/${c.collection}/records?page=${i + 1}&perPage=30&sort=-created`), expectStatus: 200 };
  }
}
