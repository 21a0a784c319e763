#!/usr/bin/env node
// Runs PocketBase's own API scenarios (apis/*_test.go of a PocketBase checkout) over HTTP against
// Cairn holding PocketBase's test data, and compares each answer as PocketBase's test helper does
// (tests/api.go: the status, then each expected / forbidden fragment in the body after
// json.Compact). Reading scenarios of a test file share one fresh copy of the data; each writing
// scenario gets its own.
//
//   node scripts/compat/pb-scenarios.mjs --pb <pocketbase checkout> --data <pocketbase-tests fixture>
//     [--cairn <cairn checkout, default .>] [--work <scratch dir>] [--out results.json]
//     [--report report.md] [--deviations deviations.json] [--only <file or name substring>]
//     [--database-url postgres://…/postgres (run on PostgreSQL)]
//
// --deviations: [{file, name, why}] of scenarios whose difference the contract decides; they are
// run and listed apart. Nothing fetched is read from this repository: every path is an argument.

import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cairnCli, startCairn } from './cairn-server.mjs';
import { TestDataFile } from './go-literals.mjs';
import { extractAll } from './pb-scenarios-extract.mjs';
import { createDatabase, dropDatabase } from './pg.mjs';

const { values: opts } = parseArgs({
  options: {
    pb: { type: 'string' },
    data: { type: 'string' },
    cairn: { type: 'string', default: '.' },
    work: { type: 'string', default: '/tmp/cairn-pb-scenarios' },
    out: { type: 'string' },
    report: { type: 'string' },
    deviations: { type: 'string' },
    only: { type: 'string', multiple: true },
    'database-url': { type: 'string' },
  },
});
if (!opts.pb || !opts.data) {
  console.error('usage: pb-scenarios.mjs --pb <pocketbase checkout> --data <pocketbase-tests fixture> [options]');
  process.exit(2);
}
const cairnRoot = resolve(opts.cairn);
const work = resolve(opts.work);
const pgUrl = opts['database-url'];
const deviations = opts.deviations ? JSON.parse(readFileSync(opts.deviations, 'utf8')) : [];
const deviationOf = (s) => deviations.find((d) => d.file === s.file && d.name === s.name && (!d.fn || d.fn === s.fn));

const all = extractAll(resolve(opts.pb));
const runnable = all.filter((s) => !s.needsGo && (!opts.only || opts.only.some((o) => s.file.includes(o) || s.name.includes(o))));

rmSync(work, { recursive: true, force: true });
mkdirSync(join(work, 'logs'), { recursive: true });
cpSync(opts.data, join(work, 'pb_data'), { recursive: true });

// One import, copied for every run: a directory (SQLite) or a template database (PostgreSQL).
const baseDb = 'cairn_pbscen_base';
if (pgUrl) {
  await dropDatabase(pgUrl, baseDb);
  await createDatabase(pgUrl, baseDb);
}
cairnCli(cairnRoot, ['import', 'pocketbase', join(work, 'pb_data'), '--dir', join(work, 'base'), ...(pgUrl ? ['--database-url', withDb(pgUrl, baseDb)] : [])]);

function withDb(url, db) {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

const isReading = (s) => s.method === 'GET' || s.method === 'HEAD';
const groups = [];
for (const file of [...new Set(runnable.map((s) => s.file))]) {
  const ofFile = runnable.filter((s) => s.file === file);
  const readers = ofFile.filter(isReading);
  if (readers.length) groups.push(readers);
  for (const s of ofFile.filter((x) => !isReading(x))) groups.push([s]);
}

const results = [];
let runNo = 0;
for (const group of groups) {
  const n = ++runNo;
  const dir = join(work, `run-${n}`);
  cpSync(join(work, 'base'), dir, { recursive: true });
  const env = {};
  const db = `cairn_pbscen_run_${n}`;
  if (pgUrl) {
    await dropDatabase(pgUrl, db);
    await createDatabase(pgUrl, db, baseDb);
    env.CAIRN_DATABASE_URL = withDb(pgUrl, db);
  }
  const server = await startCairn({ cairnRoot, dir, env, logFile: join(work, 'logs', `run-${n}.log`) });
  try {
    for (const s of group) {
      const r = await runScenario(server.url, s);
      results.push(r);
      process.stderr.write(`${r.pass ? 'ok  ' : 'FAIL'} ${s.file} ${s.name}${r.pass ? '' : `: ${r.failures[0]}`}\n`);
    }
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
    if (pgUrl) await dropDatabase(pgUrl, db);
  }
}
if (pgUrl) await dropDatabase(pgUrl, baseDb);

async function runScenario(base, s) {
  const res = await send(base, s);
  const failures = [];
  if (res.status !== s.expectedStatus) failures.push(`status ${res.status}, expected ${s.expectedStatus}`);
  if (!s.expectedContent.length && !s.notExpectedContent.length) {
    if (res.body.length) failures.push('expected an empty body');
  } else {
    const body = normalizedBody(res.body);
    const expected = (x) => (x instanceof TestDataFile || x?.rel ? readFileSync(join(opts.data, x.rel)) : Buffer.from(x, 'utf8'));
    // PocketBase's helper stops at the first missing and the first forbidden fragment
    const missing = s.expectedContent.find((x) => body.indexOf(expected(x)) < 0);
    if (missing !== undefined) failures.push(`missing ${show(missing)}`);
    const forbidden = s.notExpectedContent.find((x) => body.indexOf(expected(x)) >= 0);
    if (forbidden !== undefined) failures.push(`unexpected ${show(forbidden)}`);
  }
  const deviation = deviationOf(s);
  return {
    file: s.file,
    fn: s.fn,
    name: s.name,
    method: s.method,
    url: s.url,
    requestBody: typeof s.body === 'string' ? s.body : null,
    headers: s.headers,
    expectedStatus: s.expectedStatus,
    status: res.status,
    pass: failures.length === 0,
    failures,
    deviation: deviation?.why ?? null,
    body: res.body.subarray(0, 4000).toString('utf8'),
  };
}

function show(x) {
  if (typeof x !== 'string') return `<bytes of ${x.rel}>`;
  return x.length > 200 ? `${x.slice(0, 200)}…` : x;
}

/** Sends the scenario's request as Go's httptest would: content-type JSON unless the scenario sets one. */
function send(base, s) {
  return new Promise((done) => {
    const headers = { 'content-type': 'application/json' };
    for (const [k, v] of Object.entries(s.headers ?? {})) headers[k.toLowerCase()] = String(v).trim();
    const body = typeof s.body === 'string' ? Buffer.from(s.body, 'utf8') : null;
    if (body) headers['content-length'] = String(body.length);
    const url = new URL(base);
    const req = request({ host: url.hostname, port: url.port, method: s.method, path: safePath(s.url), headers });
    const chunks = [];
    let status = 0;
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      clearTimeout(guard);
      done({ status, body: Buffer.concat(chunks) });
    };
    // a scenario's Timeout ends the request (realtime streams); an answer that never ends is cut at 15 s
    const guard = setTimeout(() => req.destroy(), s.timeoutMs > 0 ? s.timeoutMs : 15000);
    req.on('response', (res) => {
      status = res.statusCode;
      res.on('data', (c) => chunks.push(c));
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    req.on('error', finish);
    req.end(body ?? undefined);
  });
}

// Node refuses a path with spaces or other characters Go's test request would take as they are
function safePath(url) {
  return url.replace(/[^\x21-\x7e]/g, (c) => encodeURIComponent(c));
}

/**
 * The body as PocketBase's helper compares it: json.Compact of valid JSON (whitespace outside
 * strings removed, every token kept as written), else the bytes as they are. Inside strings, `<`,
 * `>`, `&`, U+2028 and U+2029 are written as Go's encoder writes them, so a fragment quoting
 * PocketBase's escaping finds the same text.
 */
export function normalizedBody(buf) {
  const text = buf.toString('utf8');
  try {
    JSON.parse(text);
  } catch {
    return buf;
  }
  let out = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') {
        out += c + text[++i];
        continue;
      }
      if (c === '"') inString = false;
      const esc = { '<': '\\u003c', '>': '\\u003e', '&': '\\u0026', '\u2028': '\\u2028', '\u2029': '\\u2029' }[c];
      out += esc ?? c;
      continue;
    }
    if (c === ' ' || c === '\n' || c === '\r' || c === '\t') continue;
    if (c === '"') inString = true;
    out += c;
  }
  return Buffer.from(out, 'utf8');
}

// ---- the summary
const files = [...new Set(results.map((r) => r.file))].sort();
const rows = files.map((f) => {
  const of = results.filter((r) => r.file === f);
  const dev = of.filter((r) => r.deviation);
  return { file: f, passed: of.filter((r) => r.pass).length, total: of.length, deviations: dev.length, devFailed: dev.filter((r) => !r.pass).length };
});
const passed = results.filter((r) => r.pass).length;
const devs = results.filter((r) => r.deviation);
let md = `| PocketBase test file | passed / runnable |\n| --- | --- |\n`;
for (const r of rows) md += `| \`${r.file}\` | ${r.passed}/${r.total}${r.devFailed ? ` (${r.devFailed} deviation${r.devFailed > 1 ? 's' : ''})` : ''} |\n`;
md += `| **all** | **${passed}/${results.length}**; without the ${devs.length} scenarios of deviations: **${results.filter((r) => !r.deviation && r.pass).length}/${results.length - devs.length}** |\n`;
md += `\nNot runnable (Go set-up, Go-built bodies): ${all.filter((s) => s.needsGo).length} of ${all.length}.\n\n## Failures\n\n`;
for (const r of results.filter((x) => !x.pass)) {
  md += `- \`${r.file}\` ${r.fn} «${r.name}» ${r.method} ${r.url}${r.deviation ? ` — deviation: ${r.deviation}` : ''}\n  - ${r.failures.join('; ')}\n  - answer ${r.status}: \`${r.body.slice(0, 300).replace(/`/g, "'").replace(/\n/g, ' ')}\`\n`;
}
if (opts.out) writeFileSync(opts.out, JSON.stringify({ at: new Date().toISOString(), results, notRunnable: all.filter((s) => s.needsGo).map((s) => ({ file: s.file, name: s.name, why: s.needsGo })) }, null, 2));
if (opts.report) writeFileSync(opts.report, md);
process.stdout.write(md.split('\n## Failures')[0] + '\n');
process.stdout.write(`${passed}/${results.length} passed\n`);
