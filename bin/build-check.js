// Whether the compiled build in dist/ is older than the sources it was made from: plain JavaScript
// with no dependency, run by bin/cairn.js before anything else is loaded.
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** The latest modification time of a file under `dir` that the build compiles (tests excluded). */
function newestSource(dir) {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestSource(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) newest = Math.max(newest, statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * Undefined when `root`'s dist/ may run; else the one-line reason it may not. Without src/ (an
 * installation of the build alone) there is nothing to compare with.
 */
export function buildProblem(root) {
  const stamp = path.join(root, 'dist', '.build-stamp');
  if (!existsSync(stamp)) return 'there is no build (dist/): run npm run build';
  const src = path.join(root, 'src');
  if (!existsSync(src)) return undefined;
  if (newestSource(src) > statSync(stamp).mtimeMs) return 'the build (dist/) is older than the sources in src/: run npm run build (or use npm run dev while developing)';
  return undefined;
}
