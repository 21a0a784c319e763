#!/usr/bin/env node
// Runs the compiled build (dist/, made by `npm install` through `npm run build`) with plain node: no
// TypeScript loader at run time, which cost a start of about a second and some 80 MB resident.
// A build older than the sources is refused with a one-line hint rather than run
// (CAIRN_BUILD_CHECK=off skips the check); `npm run dev` runs the sources themselves.
import { fileURLToPath } from 'node:url';
import { buildProblem } from './build-check.js';

if (process.env.CAIRN_BUILD_CHECK !== 'off') {
  const problem = buildProblem(fileURLToPath(new URL('..', import.meta.url)));
  if (problem) {
    process.stderr.write(`cairn: ${problem}\n`);
    process.exit(1);
  }
}
await import('../dist/main.js');
