// `npm run build:server`: compiles src/ to plain JavaScript in dist/ (tsconfig.build.json), which is
// what `npm start` and the `cairn` command run, bundles the pb_hooks worker's script, then writes
// dist/.build-stamp. bin/cairn.js compares the stamp with the sources and refuses to run a build
// older than them (bin/build-check.js).
// dist/ is emptied first, so a deleted source leaves no module behind.
//
// The same compilation emits declarations; only those of the package's public module (dist/index.d.ts
// and what it imports: hooks/types, the error classes, the middlewares, createCairn) are kept, so the
// published types are the interface application code sees and nothing internal.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);

// Relative imports in a declaration file: `from './x.ts'` and `import('./x.ts')`.
const RELATIVE = /(\bfrom\s*|\bimport\s*\(\s*)(['"])(\.\.?\/[^'"]+?)\.ts\2/g;
const publicTypes = new Set();
const visit = (file) => {
  if (publicTypes.has(file)) return;
  publicTypes.add(file);
  const text = readFileSync(file, 'utf8');
  for (const m of text.matchAll(RELATIVE)) visit(path.resolve(path.dirname(file), `${m[3]}.d.ts`));
  // `./x.js`, as a consumer's TypeScript of any version resolves to `./x.d.ts`.
  writeFileSync(file, text.replace(RELATIVE, (_all, lead, quote, spec) => `${lead}${quote}${spec}.js${quote}`));
};
visit(path.join(dist, 'index.d.ts'));
const prune = (dir) => {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) prune(full);
    else if (entry.name.endsWith('.d.ts') && !publicTypes.has(full)) rmSync(full);
  }
};
prune(dist);

// The pb_hooks worker's script (src/pbhooks/runtime/bundle.ts): the runtime's modules bundled into one
// file, which dist/pbhooks/runtime/bundle.js reads instead of bundling at run time.
const esbuild = await import('esbuild');
await esbuild.build({
  entryPoints: [path.join(dist, 'pbhooks/runtime/worker-entry.js')],
  outfile: path.join(dist, 'pbhooks/runtime/worker.bundle.js'),
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  keepNames: true,
  logLevel: 'warning',
});

// Written last: its time is when the build finished, later than every source it compiled.
writeFileSync(path.join(dist, '.build-stamp'), `${new Date().toISOString()}\n`);
