// `npm run bench [-- case…]`: Cairn against a bare Fastify + better-sqlite3 baseline, same data, same
// SQL, same load, in one run. See docs/performance.md for what is measured and the latest figures.
//
// Each case is measured on its own, in rounds alternating baseline and Cairn; a case measured relative
// to another (`relativeTo`) runs in the same rounds as that case when both are selected (baseline A,
// Cairn A, baseline B, Cairn B, then the reverse, …), because measured one after the other the second
// case came out slower on this shared machine, whatever it was, and the ratio with it.
//
// Environment: BENCH_DURATION (seconds measured per target and case, default 5: with every case the run
// stays under 3 minutes), BENCH_ROUNDS (rounds those seconds are split into, default 3; an even number
// cancels a linear drift exactly), BENCH_WARMUP (seconds of unmeasured load per target before that,
// default 1), BENCH_CONNECTIONS (default 50), BENCH_RATE (requests per second instead of as many as
// possible: compares CPU time per request at equal load), BENCH_VERBOSE=1 (show the servers' output),
// BENCH_PROFILE=DIR (write both servers' CPU profiles there, to open in Chrome DevTools),
// BENCH_LOG_LEVEL (Cairn's CAIRN_LOG_LEVEL, default info), BENCH_LATENCY=1 (each round's latency
// distribution), BENCH_LOOP=1 (event loop turns, GC and CPU by thread per case: lib/loop-monitor.cjs), BENCH_CAIRN_FLAGS (Node
// flags for Cairn alone), BENCH_AGAINST=logs-off (instead of the bare
// baseline, a second Cairn on the same data with CAIRN_REQUEST_LOGS=off: the cost of the request log,
// judged against ≥ 90 %), BENCH_SOAK_S (the `soak` case's seconds, bench/footprint.ts). Cases measured together use
// BENCH_PAIR_DURATION (default 10) and BENCH_PAIR_ROUNDS (default 10) instead: their ratio compares
// two Cairn figures, each with this machine's noise, and three rounds gave 70–96 % for the same code
// where ten gave 78–82 %.
import BetterSqlite3 from 'better-sqlite3';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PRAGMAS } from '../src/storage/sqlite/driver.ts';
import type { BenchCase, CairnClient, PrepareContext, SoloCase } from './case.ts';
import { cases, soloCases } from './cases/index.ts';
import { compare, type LoadOptions, type MeasuredCase, type Measurement, type Target } from './lib/load.ts';
import { runGuard } from './guard.ts';
import { type RunningServer, startProcess } from './lib/servers.ts';
import { afterCasesLines, measureStart, runSoak, settledMemory } from './footprint.ts';
import { PG_CASES } from './postgres/cases.ts';
import { runPostgresCases } from './postgres/run.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const ADMIN_EMAIL = 'bench@example.com';
const ADMIN_PASSWORD = 'bench-admin-password';

function numberEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isFinite(n) || n < 0) throw new Error(`${name} must be a non-negative number`);
  return n;
}

function cairnClient(url: string, adminToken: string): CairnClient {
  const admin = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(url + p, {
      method,
      headers: { authorization: adminToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${p} answered ${res.status}: ${text}`);
    return text === '' ? undefined : JSON.parse(text);
  };
  return {
    url,
    adminToken,
    admin,
    async createRecords(collection, count, make) {
      const ids: string[] = new Array(count);
      let next = 0;
      const worker = async () => {
        while (next < count) {
          const i = next++;
          ids[i] = (await admin('POST', `/api/collections/${collection}/records`, make(i))).id;
        }
      };
      await Promise.all(Array.from({ length: 16 }, worker));
      return ids;
    },
  };
}

/** Copies a table (DDL, indexes, rows) from Cairn's database file into the baseline's. */
function copyTable(from: BetterSqlite3.Database, to: BetterSqlite3.Database, table: string): void {
  const ddl = from.prepare("SELECT type, sql FROM sqlite_master WHERE tbl_name = ? AND sql IS NOT NULL ORDER BY type = 'index'").all(table) as Array<{ sql: string }>;
  if (ddl.length === 0) throw new Error(`Cairn has no table ${table}`);
  for (const { sql } of ddl) to.exec(sql);
  const rows = from.prepare(`SELECT * FROM "${table}" ORDER BY rowid`).all() as Record<string, unknown>[];
  if (rows.length === 0) return;
  const columns = Object.keys(rows[0]);
  const insert = to.prepare(`INSERT INTO "${table}" (${columns.map((c) => `"${c}"`).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  to.transaction(() => {
    for (const row of rows) insert.run(...columns.map((c) => row[c]));
  })();
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

function cpu(m: Measurement): string {
  return m.cpuUs === undefined ? '?' : fmt(m.cpuUs);
}

/** The selected cases in the groups measured in shared rounds: each case with the selected cases
 * measured relative to it (see the top of this file for why). */
function measuredTogether(selected: BenchCase[]): BenchCase[][] {
  const isSelected = (name: string) => selected.some((c) => c.name === name);
  const groups = selected
    .filter((c) => !(c.relativeTo && isSelected(c.relativeTo.name)))
    .map((c) => [c, ...selected.filter((o) => o.relativeTo?.name === c.name)]);
  if (groups.flat().length < selected.length) throw new Error('a case is relative to a case that is itself relative to another: not supported');
  return groups;
}

interface CaseResult {
  c: BenchCase;
  baseline: Measurement;
  cairn: Measurement;
  /** The case named by `c.relativeTo`, measured in the same rounds. */
  reference?: CaseResult;
}

/** The request log's target: Cairn with it on keeps at least this share of Cairn's throughput with it off. */
const LOGS_TARGET = 0.9;

/** Cairn's p99 at most this multiple of the baseline's in the same run (issue 22). */
const P99_TARGET = 1.3;

function p99Ratio(baseline: Measurement, cairn: Measurement): string {
  // autocannon reports whole milliseconds: a 1 ms baseline p99 makes any ratio coarse.
  if (baseline.p99 <= 0) return '?';
  const r = cairn.p99 / baseline.p99;
  return `${fmt(r, 2)}× ${r <= P99_TARGET ? '(met)' : '(**above**)'}`;
}

function report(results: CaseResult[], load: LoadOptions, pairLoad: LoadOptions, logLevel: string, seconds: number, loadAverage: number, logsOff: boolean): string {
  const against = logsOff ? 'Cairn, request logs off' : 'baseline';
  const lines = [
    `| case | ${against} req/s | Cairn req/s | ratio | target | ${against} p99 ms | Cairn p99 ms | p99 ratio (≤ ${fmt(P99_TARGET, 1)}×) | CPU µs/req ${against} / Cairn |`,
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  for (const { c, baseline, cairn } of results) {
    const ratio = cairn.rps / baseline.rps;
    const target = logsOff ? LOGS_TARGET : c.target;
    const verdict = target === undefined ? '' : ratio >= target ? ` (met)` : ` (**below**)`;
    lines.push(
      `| ${c.name}: ${c.description} | ${fmt(baseline.rps)} | ${fmt(cairn.rps)} | ${fmt(ratio * 100)}% | ${target === undefined ? '' : `≥ ${fmt(target * 100)}%`}${verdict} | ${fmt(baseline.p99)} | ${fmt(cairn.p99)} | ${p99Ratio(baseline, cairn)} | ${cpu(baseline)} / ${cpu(cairn)} |`,
    );
  }
  if (logsOff) lines.push('', 'Both columns are Cairn on the same data directory: request logs on (default) against CAIRN_REQUEST_LOGS=off.');
  for (const { c, baseline, cairn, reference: other } of results) {
    if (cairn.drain) {
      lines.push(
        '',
        `${c.name}: after each Cairn round, its background work finished in ${cairn.drain.ms.map((ms) => fmt(ms)).join(', ')} ms; ` +
          `Cairn CPU µs/req including it: ${cairn.drain.cpuUs === undefined ? '?' : fmt(cairn.drain.cpuUs)} (${cpu(cairn)} during the load alone).`,
      );
    }
    if (c.relativeTo && other) {
      // The raw ratio is the issue's quantity, so it is the one judged; dividing each case by its
      // baseline in the same rounds is a cross-check that the two cases saw the same machine.
      // Per unit of work: a request of 50 creates counts as 50 creates.
      const units = (c.unitsPerRequest ?? 1) / (other.c.unitsPerRequest ?? 1);
      const ratio = (cairn.rps / other.cairn.rps) * units;
      const normalised = (cairn.rps / baseline.rps / (other.cairn.rps / other.baseline.rps)) * units;
      const withDrain = cairn.drain?.cpuUs;
      // Neighbouring rounds saw about the same machine, so their ratios show the measurement's spread.
      const perRound = cairn.roundRps.map((rps, i) => (rps / other.cairn.roundRps[i]) * units * 100).sort((a, b) => a - b);
      const per = units === 1 ? '' : ` per unit of work (${c.unitsPerRequest ?? 1} per request against ${other.c.unitsPerRequest ?? 1})`;
      const cpuPerUnit = units === 1 || cairn.cpuUs === undefined ? '' : ` (${fmt(cairn.cpuUs / (c.unitsPerRequest ?? 1))} per unit)`;
      const target = c.relativeTo.target;
      lines.push(
        '',
        `${c.name} / ${other.c.name}, Cairn throughput in the same rounds${per}: ${fmt(ratio * 100)}%` +
          (target === undefined ? '' : `, judged against the target ≥ ${fmt(target * 100)}%: ${ratio >= target ? 'met' : '**below**'}`) +
          `; normalised by each case's baseline (cross-check, not judged): ${fmt(normalised * 100)}%; ` +
          `CPU µs/req ${cpu(other.cairn)} → ${cpu(cairn)}${cpuPerUnit}${withDrain === undefined ? '' : ` (${fmt(withDrain)} with the drain)`}; ` +
          `round by round ${fmt(perRound[0])}–${fmt(perRound[perRound.length - 1])}%, median ${fmt(perRound[Math.floor(perRound.length / 2)])}%.`,
      );
    }
  }
  const cpus = os.cpus();
  lines.push(
    '',
    `${load.connections} connections${load.rate > 0 ? ` at ${load.rate} requests/s` : ''}; per case and target ${load.warmup} s warm-up, then ${load.duration} s measured in ${load.rounds} rounds ` +
      `alternating the targets${results.some((r) => r.reference) ? `; a case measured relative to another shares its rounds, ${pairLoad.duration} s in ${pairLoad.rounds} rounds, each running both cases' targets, the order reversed every other round` : ''}; p99 is the median of the rounds' p99; collection rules \`""\` unless the case names one, ` +
      `guests on both sides unless the case names a user or owner (then a user's bearer token, which only Cairn checks); Cairn's log level ${logLevel}, output discarded.`,
    `Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown CPU'}, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB, ${os.type()} ${os.release()}, Node ${process.version}; load average ${fmt(loadAverage, 1)} when the run started (other work on the machine skews the ratios). Run took ${fmt(seconds)} s.`,
  );
  return lines.join('\n');
}

/** What loop-monitor.cjs reports for one server and case (see that file). */
interface LoopReport {
  requests?: number;
  requestsPerTurn: number;
  cpuMs: { p50: number; p99: number };
  waitMs: { p50: number; p99: number };
  gc: { pauses: number; usPerRequest: number; p99Ms: number; maxMs: number; markCompacts: number };
  cpuUsPerRequest: { loop: number; v8Helpers: number; otherThreads: number };
}

/** Asks a server's loop monitor for what it saw since the last call (and to start again). */
async function loopReport(server: RunningServer): Promise<LoopReport | undefined> {
  const file = server.env.BENCH_LOOP_FILE ?? '';
  const lines = () => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);
  const before = lines().length;
  server.child.kill('SIGUSR2');
  const deadline = Date.now() + 10_000;
  while (lines().length <= before) {
    if (Date.now() > deadline) throw new Error('the loop monitor did not answer');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const report = JSON.parse(lines()[before]) as LoopReport;
  return report.requests ? report : undefined;
}

const LOOP_HEADER = [
  'Event loop (BENCH_LOOP): turns with ≥ 10 requests, their run-queue wait (schedstat) and the rest (turn CPU); GC pauses; CPU by thread. See docs/performance.md.',
  '',
  '| case | target | requests per turn | turn CPU ms p50 / p99 | turn wait ms p50 / p99 | GC pauses (full), µs/req, p99 / max ms | CPU µs/req loop / V8 helpers / other threads |',
  '| --- | --- | ---: | ---: | ---: | ---: | ---: |',
];

function loopLinesOf(name: string, baseline: LoopReport | undefined, cairn: LoopReport | undefined, against: string): string[] {
  return (
    [
      [against, baseline],
      ['Cairn', cairn],
    ] as const
  ).map(([target, r]) =>
    r
      ? `| ${name} | ${target} | ${r.requestsPerTurn} | ${r.cpuMs.p50} / ${r.cpuMs.p99} | ${r.waitMs.p50} / ${r.waitMs.p99} | ${r.gc.pauses} (${r.gc.markCompacts}), ${r.gc.usPerRequest}, ${r.gc.p99Ms} / ${r.gc.maxMs} | ${r.cpuUsPerRequest.loop} / ${r.cpuUsPerRequest.v8Helpers} / ${r.cpuUsPerRequest.otherThreads} |`
      : `| ${name} | ${target} | no requests | | | | |`,
  );
}

/**
 * Runs the cases named in `args` (every case when none) and prints the report; returns each case's
 * measurements. `guard`: only the cases named, and none of the footprint's measures (bench/guard.ts).
 */
async function main(args: string[], guard = false): Promise<MeasuredCase[]> {
  const started = Date.now();
  const loadAverage = os.loadavg()[0];
  const measuredCases: MeasuredCase[] = [];
  // Footprint (bench/footprint.ts): `soak` runs only when named; `footprint` (start time, idle memory)
  // with every full run or when named.
  const soak = args.includes('soak');
  const footprint = !guard && (args.length === 0 || args.includes('footprint'));
  const wanted = args.filter((a) => a !== 'soak' && a !== 'footprint');
  if (wanted.length === 0 && args.length > 0) {
    const lines = [...(footprint ? await measureStart() : []), ...(soak ? ['', ...(await runSoak())] : [])];
    process.stdout.write(`${lines.join('\n')}\n`);
    return measuredCases;
  }
  const known = [...cases, ...soloCases, ...PG_CASES].map((c) => c.name);
  const unknown = wanted.filter((w) => !known.includes(w));
  if (unknown.length > 0) throw new Error(`unknown case(s) ${unknown.join(', ')}; known: ${[...known, 'footprint', 'soak'].join(', ')}`);
  const selected = wanted.length > 0 ? cases.filter((c) => wanted.includes(c.name)) : cases;
  const solos: SoloCase[] = wanted.length > 0 ? soloCases.filter((c) => wanted.includes(c.name)) : soloCases;
  const postgresCases = wanted.length > 0 ? wanted.filter((w) => PG_CASES.some((c) => c.name === w)) : PG_CASES.map((c) => c.name);
  const load: LoadOptions = {
    connections: numberEnv('BENCH_CONNECTIONS', 50),
    duration: numberEnv('BENCH_DURATION', 5),
    warmup: numberEnv('BENCH_WARMUP', 1),
    rounds: Math.max(1, Math.round(numberEnv('BENCH_ROUNDS', 3))),
    rate: numberEnv('BENCH_RATE', 0),
  };
  const pairLoad: LoadOptions = {
    ...load,
    duration: numberEnv('BENCH_PAIR_DURATION', 10),
    rounds: Math.max(1, Math.round(numberEnv('BENCH_PAIR_ROUNDS', 10))),
  };

  const logLevel = process.env.BENCH_LOG_LEVEL || 'info';
  const against = process.env.BENCH_AGAINST ?? '';
  if (against !== '' && against !== 'logs-off') throw new Error(`BENCH_AGAINST must be logs-off, got "${against}"`);
  const logsOff = against === 'logs-off';
  if (selected.length === 0 && solos.length === 0) {
    process.stdout.write(`${(await runPostgresCases(postgresCases, load, measuredCases)).join('\n')}\n`);
    return measuredCases;
  }
  const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  const servers: RunningServer[] = [];
  try {
    const profile = process.env.BENCH_PROFILE ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(process.env.BENCH_PROFILE)] : [];
    // BENCH_LOOP=1: both servers report turns, GC pauses and CPU by thread for each case (loop-monitor.cjs).
    const loop = process.env.BENCH_LOOP ? ['--require', path.join(ROOT, 'bench/lib/loop-monitor.cjs')] : [];
    const loopFile = (name: string): Record<string, string> => (loop.length > 0 ? { BENCH_LOOP_FILE: path.join(dir, `loop-${name}.jsonl`) } : {});
    // Node/V8 flags for Cairn's process alone (BENCH_CAIRN_FLAGS, e.g. GC settings to compare).
    const cairnFlags = (process.env.BENCH_CAIRN_FLAGS ?? '').split(' ').filter(Boolean);
    const cairn = await startProcess(
      // With the bench's hooks (bench/hooks, bench/pb_hooks), each bound to its own case's collection or path.
      [...profile, ...loop, ...cairnFlags, path.join(ROOT, 'bin/cairn.js'), 'serve', '--dir', path.join(dir, 'cairn'), '--host', '127.0.0.1', '--hooks', path.join(ROOT, 'bench/hooks'), '--pb-hooks', path.join(ROOT, 'bench/pb_hooks')],
      { CAIRN_LOG_LEVEL: logLevel, CAIRN_RATE_LIMIT: 'off', CAIRN_ADMIN_EMAIL: ADMIN_EMAIL, CAIRN_ADMIN_PASSWORD: ADMIN_PASSWORD, NODE_ENV: 'production', ...loopFile('cairn') },
      '/api/health',
    );
    servers.push(cairn);
    const login = await fetch(`${cairn.url}/api/admins/auth-with-password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identity: ADMIN_EMAIL, password: ADMIN_PASSWORD }),
    });
    if (!login.ok) throw new Error(`admin login failed: ${await login.text()}`);
    const client = cairnClient(cairn.url, ((await login.json()) as { token: string }).token);
    const rssBefore = cairn.rssBytes();

    const baselineFile = path.join(dir, 'baseline.db');
    const baselineDb = new BetterSqlite3(baselineFile);
    for (const pragma of PRAGMAS) baselineDb.pragma(pragma);
    const cairnDb = new BetterSqlite3(path.join(dir, 'cairn/databases/main.db'), { readonly: true });
    const ctx: PrepareContext = { cairn: client, baseline: baselineDb, copyToBaseline: (table) => copyTable(cairnDb, baselineDb, table), cairnRss: () => cairn.rssBytes() };
    const states = new Map<BenchCase, unknown>();
    for (const c of selected) {
      process.stderr.write(`preparing ${c.name}…\n`);
      states.set(c, await c.prepare(ctx));
    }
    const soloStates = new Map<SoloCase, unknown>();
    for (const c of solos) {
      process.stderr.write(`preparing ${c.name}…\n`);
      soloStates.set(c, await c.prepare(ctx));
    }
    cairnDb.close();
    baselineDb.close();

    // Against logs off: a second Cairn process on the same files (SQLite serves both; the cases only
    // read, and only the first writes its request log).
    const baseline = logsOff
      ? await startProcess(
          // With the bench's hooks (bench/hooks, bench/pb_hooks), each bound to its own case's collection or path.
      [...profile, ...loop, ...cairnFlags, path.join(ROOT, 'bin/cairn.js'), 'serve', '--dir', path.join(dir, 'cairn'), '--host', '127.0.0.1', '--hooks', path.join(ROOT, 'bench/hooks'), '--pb-hooks', path.join(ROOT, 'bench/pb_hooks')],
          { CAIRN_LOG_LEVEL: logLevel, CAIRN_RATE_LIMIT: 'off', CAIRN_REQUEST_LOGS: 'off', NODE_ENV: 'production', ...loopFile('baseline') },
          '/api/health',
        )
      : await startProcess(
          [...profile, ...loop, '--import', 'tsx', path.join(ROOT, 'bench/baseline.ts'), '--db', baselineFile, '--cases', selected.map((c) => c.name).join(',')],
          loopFile('baseline'),
          '/api/health',
        );
    servers.push(baseline);

    const results: CaseResult[] = [];
    const loopLines: string[] = [];
    for (const group of measuredTogether(selected)) {
      process.stderr.write(`measuring ${group.map((c) => c.name).join(' with ')}…\n`);
      if (loop.length > 0) await Promise.all([loopReport(baseline), loopReport(cairn)]);
      const measurements = await compare(
        group.flatMap((c): Target[] => {
          const state = states.get(c);
          return [
            { url: baseline.url, request: c.request(state, logsOff ? 'cairn' : 'baseline'), cpuSeconds: baseline.cpuSeconds },
            { url: cairn.url, request: c.request(state, 'cairn'), cpuSeconds: cairn.cpuSeconds, after: c.afterRound && ((n) => c.afterRound!(state, n)) },
          ];
        }),
        group.length > 1 ? pairLoad : load,
      );
      const measured = group.map((c, i): CaseResult => {
        const [b, k] = measurements.slice(2 * i, 2 * i + 2);
        for (const [target, m] of [['baseline', b], ['Cairn', k]] as const) {
          if (m.failures > 0) throw new Error(`${c.name}: ${target} gave ${m.failures} unexpected answers (${JSON.stringify(m.statuses)}): the case is broken`);
        }
        return { c, baseline: b, cairn: k };
      });
      for (const r of measured.slice(1)) r.reference = measured[0];
      for (const c of group) await c.done?.(states.get(c));
      if (loop.length > 0) {
        const [b, k] = await Promise.all([loopReport(baseline), loopReport(cairn)]);
        loopLines.push(...loopLinesOf(group.map((c) => c.name).join(' + '), b, k, logsOff ? 'logs off' : 'baseline'));
      }
      results.push(...measured);
      measuredCases.push(...measured.map((r) => ({ name: r.c.name, baseline: r.baseline, cairn: r.cairn })));
    }
    const notes: string[] = [];
    const memoryAfter = cairn.resident();
    for (const c of selected) if (c.report) notes.push(...(await c.report(states.get(c))));
    for (const c of solos) {
      process.stderr.write(`measuring ${c.name}…\n`);
      notes.push((await c.measure(soloStates.get(c), { cairn, load })).join('\n'));
    }
    // Read again once the load is over and V8 and the allocator had time to give back what it left.
    const memorySettled = selected.length > 0 && !guard ? await settledMemory(cairn) : undefined;
    for (const s of servers.splice(0).reverse()) await s.stop();
    const pgLines = logsOff ? [] : await runPostgresCases(postgresCases, load, measuredCases);
    process.stdout.write(`${results.length > 0 ? report(results, load, pairLoad, logLevel, (Date.now() - started) / 1000, loadAverage, logsOff) : ''}\n${pgLines.length > 0 ? `\n${pgLines.join('\n')}\n` : ''}`);
    if (notes.length > 0) process.stdout.write(`\n${notes.join('\n\n')}\n`);
    if (loopLines.length > 0) process.stdout.write(`\n${LOOP_HEADER.join('\n')}\n${loopLines.join('\n')}\n`);
    const footprintLines = footprint ? await measureStart() : [];
    // Memory after the cases means something only once paired cases loaded the bench's Cairn.
    const memoryLines = guard || selected.length === 0 ? [] : afterCasesLines(memoryAfter, memorySettled, rssBefore);
    process.stdout.write(`\n${[...footprintLines, ...memoryLines].join('\n')}\n`);
    if (soak) process.stdout.write(`\n${(await runSoak()).join('\n')}\n`);
    return measuredCases;
  } finally {
    for (const s of servers.reverse()) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

const argv = process.argv.slice(2);
if (argv[0] === 'pocketbase') {
  // PocketBase's own benchmark against Cairn on both engines (bench/pocketbase/run.ts).
  const { runPocketBaseBench } = await import('./pocketbase/run.ts');
  await runPocketBaseBench(argv.slice(1));
} else if (argv.includes('--guard')) {
  process.exitCode = (await runGuard((names) => main(names, true))) ? 0 : 1;
} else {
  await main(argv);
}
