// Runs every test file with node:test through tsx. Node 20 does not discover .ts test files itself
// (it would report zero tests), so the list is built here and passed explicitly.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

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
const concurrency = process.env.CAIRN_TEST_CONCURRENCY ?? '2';
const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, ...selected], { stdio: 'inherit' });
process.exit(result.status ?? 1);
