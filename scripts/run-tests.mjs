// Runs every test file with node:test through tsx, once per storage driver: SQLite, then PostgreSQL
// (each test server on its own database of the server at CAIRN_TEST_POSTGRES, by default the local
// one). Node 20 does not discover .ts test files itself (it would report zero tests), so the list is
// built here and passed explicitly.
//
//   node scripts/run-tests.mjs [substring…]     files whose path contains a substring
//   CAIRN_TEST_DRIVERS=sqlite|postgres           one pass only
//
// A file whose first line starts `// storage-independent:` (with the reason) checks nothing a storage
// driver changes: it runs in the first pass only, which keeps CI's whole run inside its bound.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';

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
selected.sort();

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

const storageIndependent = new Set(selected.filter((f) => readFileSync(f, 'utf8').startsWith('// storage-independent:')));

let failed = false;
for (const [pass, driver] of drivers.entries()) {
  const files = pass === 0 ? selected : selected.filter((f) => !storageIndependent.has(f));
  if (files.length === 0) continue;
  const env = { ...process.env };
  const run = randomBytes(4).toString('hex');
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
  const args = ['--import', 'tsx', '--test', '--test-force-exit', `--test-timeout=${process.env.CAIRN_TEST_TIMEOUT_MS ?? 300000}`, `--test-concurrency=${concurrency}`];
  // TAP on stdout as before; the slowest files on stderr when the pass ends (the reporter writes them itself).
  args.push('--test-reporter=tap', '--test-reporter-destination=stdout', '--test-reporter=./scripts/test-durations.mjs', '--test-reporter-destination=/dev/null');
  const result = spawnSync(process.execPath, [...args, ...files], { stdio: 'inherit', env });
  if (result.status !== 0) {
    failed = true;
    console.log(`\n# ${driver}: FAILED\n`);
  }
  if (driver === 'postgres') await dropRunDatabases(run);
}
process.exit(failed ? 1 : 0);
