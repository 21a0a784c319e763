// Runs every test file with node:test, once per storage driver: SQLite, then PostgreSQL (each test
// server on its own database of the server at CAIRN_TEST_POSTGRES, by default the local one). Node 20
// does not discover .ts test files itself (it would report zero tests), so the list is built here and
// passed explicitly.
//
// Each test file is first bundled with esbuild (its own sources inlined, packages left to
// node_modules) into .test-build/, and node runs the bundles: a file's process then loads one script
// instead of resolving some hundred modules through tsx's off-thread hooks, which cost about 2.4 s of
// CPU per file (4.2 s against 1.8 s for test/records/crud.test.ts) over the ~300 file-processes of
// both passes. `import.meta.url`, `.dirname` and `.filename` are replaced in every bundled module by
// its source's own, so every path a module computes from where it lives is what it is under tsx.
//
// A file with a `// through-tsx: <why>` line among its first comments runs from its sources through
// tsx (after the bundles, in the same pass): a TypeScript hook it loads imports `cairn`, which must be
// the process's own src/index.ts, and a bundle holds its own copy of those classes.
//
//   node scripts/run-tests.mjs [substring…]     files whose path contains a substring
//   CAIRN_TEST_DRIVERS=sqlite|postgres           one pass only
//   CAIRN_TEST_TSX=1                             run the sources through tsx instead (no bundling)
//
// A file whose first line starts `// storage-independent:` (with the reason) checks nothing a storage
// driver changes: it runs in the first pass only, which keeps CI's whole run inside its bound.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import * as esbuild from 'esbuild';
import pg from 'pg';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = path.join(ROOT, '.test-build');
process.chdir(ROOT);

const roots = ['src', 'test'];
const files = [];
function walk(dir) {
  for (const entry of readdirSync(dir)) {
    const full = path.join(dir, entry);
    if (entry === 'node_modules') continue;
    if (statSync(full).isDirectory()) walk(full);
    else if (entry.endsWith('.test.ts')) files.push(full);
  }
}
for (const root of roots) walk(root);
const filter = process.argv.slice(2);
const selected = filter.length > 0 ? files.filter((f) => filter.some((p) => f.includes(p))) : files;
if (selected.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
// The longest files start first: with two files at a time, one started late keeps a core busy alone
// after the rest have ended (the pass lasts as long as the schedule's longest lane). Longest first,
// from CI's durations report (scripts/test-durations.mjs); the others follow in path order. node
// --test sorts the files it is given by path, so each bundle's path starts with its place
// (.test-build/000/test/…).
const LONGEST_FIRST = [
  'test/cluster/rolling.test.ts',
  'test/cluster/cluster.test.ts',
  'test/hardening/sweep.test.ts',
  'test/import/pocketbase.test.ts',
  'test/http/shutdown-stress.test.ts',
  'test/dashboard/dashboard.test.ts',
  'test/package/package.test.ts',
  'test/cli/pocketbase-cli.test.ts',
  'test/migrations/cli.test.ts',
  'test/import/dry-run.test.ts',
  'test/hooks/load.test.ts',
  'test/import/pocketbase-apps.test.ts',
  'test/import/pocketbase-tokens.test.ts',
  'test/import/webapp.test.ts',
  'test/webhooks/cron.test.ts',
  'test/http/shutdown.test.ts',
  'test/settings/s3-backups.test.ts',
  'test/openapi/typegen.test.ts',
  'test/cli/serve.test.ts',
];
const rank = (f) => {
  const at = LONGEST_FIRST.indexOf(path.relative(ROOT, f));
  return at < 0 ? LONGEST_FIRST.length : at;
};
selected.sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));

const drivers = (process.env.CAIRN_TEST_DRIVERS ?? 'sqlite,postgres').split(',').map((d) => d.trim());
const postgresUrl = process.env.CAIRN_TEST_POSTGRES || 'postgres://postgres@127.0.0.1:5432/postgres';
const concurrency = process.env.CAIRN_TEST_CONCURRENCY ?? '2';

/** Drops the databases of one run (a test that crashed leaves its own behind). */
async function dropRunDatabases(run) {
  const client = new pg.Client({ connectionString: postgresUrl });
  await client.connect();
  try {
    const { rows } = await client.query('SELECT datname FROM pg_database WHERE datname LIKE $1', [`cairn_t_${run}_%`]);
    for (const { datname } of rows) await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
  } finally {
    await client.end();
  }
}

/** Bundles the test files into .test-build/; answers each source file's bundle. */
async function bundle(sources) {
  rmSync(BUILD, { recursive: true, force: true });
  if (sources.length === 0) return new Map();
  const importMeta = {
    name: 'import-meta-of-the-source',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async (args) => {
        let contents = await readFile(args.path, 'utf8');
        if (contents.includes('import.meta.')) {
          contents = contents
            .replaceAll('import.meta.url', JSON.stringify(pathToFileURL(args.path).href))
            .replaceAll('import.meta.dirname', JSON.stringify(path.dirname(args.path)))
            .replaceAll('import.meta.filename', JSON.stringify(args.path));
        }
        return { contents, loader: 'ts' };
      });
    },
  };
  const place = (i) => String(i).padStart(3, '0');
  const out = (f, i) => path.join(place(i), path.relative(ROOT, f).replace(/\.ts$/, ''));
  await esbuild.build({
    entryPoints: sources.map((f, i) => ({ in: f, out: out(f, i) })),
    outdir: BUILD,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    packages: 'external',
    keepNames: true,
    sourcemap: 'linked',
    logLevel: 'warning',
    plugins: [importMeta],
  });
  return new Map(sources.map((f, i) => [f, path.join('.test-build', `${out(f, i)}.mjs`)]));
}

// Each file's head, read once for both markers.
const heads = new Map(selected.map((f) => [f, readFileSync(f, 'utf8').slice(0, 600)]));
const useTsx = process.env.CAIRN_TEST_TSX === '1';
const throughTsx = new Set(selected.filter((f) => useTsx || /^\/\/ through-tsx:/m.test(heads.get(f))));
const bundles = await bundle(selected.filter((f) => !throughTsx.has(f)));

const storageIndependent = new Set(selected.filter((f) => heads.get(f).startsWith('// storage-independent:')));

let failed = false;
const failureReports = [];
for (const [pass, driver] of drivers.entries()) {
  const files = pass === 0 ? selected : selected.filter((f) => !storageIndependent.has(f));
  if (files.length === 0) continue;
  const env = { ...process.env };
  const run = randomBytes(4).toString('hex');
  // The reporter (scripts/test-durations.mjs) appends each failed test here; printed after every pass.
  const failures = path.join(tmpdir(), `cairn-test-failures-${run}.txt`);
  env.CAIRN_TEST_FAILURES = failures;
  if (driver === 'postgres') {
    env.CAIRN_TEST_POSTGRES = postgresUrl;
    env.CAIRN_TEST_RUN = run;
  } else if (driver === 'sqlite') {
    delete env.CAIRN_TEST_POSTGRES;
  } else {
    console.error(`unknown driver "${driver}" in CAIRN_TEST_DRIVERS`);
    process.exit(1);
  }
  console.log(`\n# ==== ${driver} ====\n`);
  // A test whose setup fails can leave servers (and their database connections) open: the file then
  // ends anyway (--test-force-exit), and no single test may hang the run (--test-timeout).
  const common = ['--test', '--test-force-exit', `--test-timeout=${process.env.CAIRN_TEST_TIMEOUT_MS ?? 300000}`, `--test-concurrency=${concurrency}`];
  // TAP on stdout as before; the slowest files on stderr when the pass ends (the reporter writes them itself).
  common.push('--test-reporter=tap', '--test-reporter-destination=stdout', '--test-reporter=./scripts/test-durations.mjs', '--test-reporter-destination=/dev/null');
  const groups = [
    { args: common, files: files.filter((f) => !throughTsx.has(f)).map((f) => bundles.get(f)) },
    { args: ['--import', 'tsx', ...common], files: files.filter((f) => throughTsx.has(f)) },
  ];
  let passFailed = false;
  for (const group of groups) {
    if (group.files.length === 0) continue;
    const result = spawnSync(process.execPath, [...group.args, ...group.files], { stdio: 'inherit', env });
    if (result.status !== 0) passFailed = true;
  }
  failed ||= passFailed;
  if (passFailed) console.log(`\n# ${driver}: FAILED\n`);
  if (existsSync(failures)) {
    failureReports.push(`# ==== ${driver}: failed tests ====\n\n${readFileSync(failures, 'utf8')}`);
    rmSync(failures);
  }
  if (driver === 'postgres') await dropRunDatabases(run);
}
if (failureReports.length > 0) console.log(`\n${failureReports.join('\n')}`);
process.exit(failed ? 1 : 0);
