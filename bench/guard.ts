// `npm run bench -- --guard`: a short run of the key cases that fails when Cairn's CPU per request,
// relative to its baseline's in the same run, has grown more than the tolerance beyond the committed
// reference (bench/guard.json). `.ci/run` runs it after the tests, so a regression of the request
// path fails CI instead of waiting for someone to read a full bench run (issue 31: view-by-id fell
// from 87–103 % of the baseline to 54 % and nobody noticed).
//
// CPU per request is the figure because it is the steadiest this shared machine gives (throughput
// moves with whatever else runs); dividing it by the baseline's, measured in alternating rounds of
// the same run, cancels most of what the machine does to both. What remains is noise of a few
// percent, and now and then a burst that hits one target's round: a case above the limit is
// measured again, alone, and fails only when it is above it again. A real regression is above it
// both times.
//
// Raising a reference is a deliberate commit that says why in the reference's `reason`. Lowering
// one (after an improvement) tightens the guard: `BENCH_GUARD_WRITE=1` prints the measured ratios
// in guard.json's format to paste from.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MeasuredCase } from './lib/load.ts';

const GUARD_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'guard.json');

interface GuardReference {
  /** How far above its reference a case's CPU ratio may go (0.2: 20 %). */
  tolerance: number;
  cases: Record<string, { ratio: number; reason: string }>;
}

function readReference(): GuardReference {
  const parsed = JSON.parse(readFileSync(GUARD_FILE, 'utf8')) as GuardReference;
  if (!(parsed.tolerance > 0) || typeof parsed.cases !== 'object') throw new Error(`${GUARD_FILE}: expected { tolerance, cases: { name: { ratio, reason } } }`);
  for (const [name, c] of Object.entries(parsed.cases)) {
    if (!(c.ratio > 0) || typeof c.reason !== 'string' || c.reason === '') throw new Error(`${GUARD_FILE}: case ${name} needs a positive ratio and a reason`);
  }
  return parsed;
}

/** Cairn's CPU per request over the baseline's. */
function cpuRatio(m: MeasuredCase): number {
  if (m.baseline.cpuUs === undefined || m.cairn.cpuUs === undefined || m.baseline.cpuUs <= 0) {
    throw new Error(`${m.name}: no CPU figure (the guard reads /proc; it runs on Linux only)`);
  }
  return m.cairn.cpuUs / m.baseline.cpuUs;
}

const fmt = (n: number) => n.toFixed(2);

/**
 * Runs the guard's cases through `measure` (bench/run.ts's main, which prints its usual report),
 * then judges them; returns whether every case is within its limit.
 */
export async function runGuard(measure: (cases: string[]) => Promise<MeasuredCase[]>): Promise<boolean> {
  const reference = readReference();
  const names = Object.keys(reference.cases);
  // Short by default (the guard's time counts toward CI's): a few seconds per case and target.
  process.env.BENCH_DURATION ||= '5';
  process.env.BENCH_ROUNDS ||= '4';
  process.env.BENCH_WARMUP ||= '1';
  const limitOf = (name: string) => reference.cases[name].ratio * (1 + reference.tolerance);

  const ratios = new Map<string, number[]>();
  const record = (results: MeasuredCase[]) => {
    for (const m of results) if (reference.cases[m.name]) ratios.set(m.name, [...(ratios.get(m.name) ?? []), cpuRatio(m)]);
  };
  record(await measure(names));
  const missing = names.filter((n) => !ratios.has(n));
  if (missing.length > 0) throw new Error(`the guard's run did not measure ${missing.join(', ')}`);
  const above = names.filter((n) => ratios.get(n)![0] > limitOf(n));
  if (above.length > 0) {
    process.stderr.write(`guard: ${above.join(', ')} above the limit; measuring again to tell a regression from a burst of other work\n`);
    record(await measure(above));
  }

  const lines = [
    '',
    `Guard (bench/guard.json, tolerance ${Math.round(reference.tolerance * 100)} %): Cairn's CPU per request over the baseline's in the same run.`,
    '',
    '| case | reference | limit | measured | verdict |',
    '| --- | ---: | ---: | ---: | --- |',
  ];
  let ok = true;
  for (const name of names) {
    const measured = ratios.get(name)!;
    const pass = measured.some((r) => r <= limitOf(name));
    ok &&= pass;
    lines.push(`| ${name} | ${fmt(reference.cases[name].ratio)}× | ${fmt(limitOf(name))}× | ${measured.map((r) => `${fmt(r)}×`).join(', then ')} | ${pass ? 'ok' : '**REGRESSION**'} |`);
  }
  lines.push('', ok ? 'guard: every case within its limit' : 'guard: FAILED: a case costs more CPU per request, relative to its baseline, than bench/guard.json allows (twice)');
  if (process.env.BENCH_GUARD_WRITE) {
    const cases = Object.fromEntries(names.map((n) => [n, { ratio: Number(fmt(Math.min(...ratios.get(n)!))), reason: reference.cases[n].reason }]));
    lines.push('', JSON.stringify({ tolerance: reference.tolerance, cases }, null, 2));
  }
  process.stdout.write(`${lines.join('\n')}\n`);
  return ok;
}
