// Prints the gzip size of what the dashboard's first load fetches (the entry script, its preloaded
// chunks and its styles, as index.html names them) and of every emitted file, and fails the build
// when the first load exceeds the budget: 60 KB of compressed JS and CSS (issue 32), so that the
// console's growth is a decision rather than a drift.
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const BUDGET = 60 * 1024;
const dist = fileURLToPath(new URL('./dist/', import.meta.url));
const html = readFileSync(path.join(dist, 'index.html'), 'utf8');
const firstLoad = [...html.matchAll(/(?:src|href)="\/_\/([^"]+\.(?:js|css))"/g)].map((m) => m[1]);
const gz = (file) => gzipSync(readFileSync(path.join(dist, file)), { level: 9 }).length;
const kb = (n) => `${(n / 1024).toFixed(1)} KB`;

const all = readdirSync(path.join(dist, 'assets')).map((f) => `assets/${f}`).filter((f) => /\.(js|css)$/.test(f));
let first = 0;
let total = 0;
console.log('dashboard build (gzip -9):');
for (const file of all.sort()) {
  const size = gz(file);
  total += size;
  const isFirst = firstLoad.includes(file);
  if (isFirst) first += size;
  console.log(`  ${isFirst ? '*' : ' '} ${file.padEnd(40)} ${kb(readFileSync(path.join(dist, file)).length).padStart(9)} raw ${kb(size).padStart(9)} gzip`);
}
console.log(`  first load (*): ${kb(first)} of JS and CSS, compressed (budget ${kb(BUDGET)}); all chunks: ${kb(total)}`);
if (first > BUDGET) {
  console.error(`The dashboard's first load is ${kb(first)} compressed, over the ${kb(BUDGET)} budget.`);
  process.exit(1);
}
