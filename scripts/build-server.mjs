// `npm run build:server`: compiles src/ to plain JavaScript in dist/ (tsconfig.build.json), which is
// what `npm start` and the `cairn` command run, then writes dist/.build-stamp. bin/cairn.js compares
// the stamp with the sources and refuses to run a build older than them (bin/build-check.js).
// dist/ is emptied first, so a deleted source leaves no module behind.
import { spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.join(root, 'dist');
rmSync(dist, { recursive: true, force: true });
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const result = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
if (result.status !== 0) process.exit(result.status ?? 1);
// Written last: its time is when the build finished, later than every source it compiled.
writeFileSync(path.join(dist, '.build-stamp'), `${new Date().toISOString()}\n`);
