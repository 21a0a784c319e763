/**
 * The pb_hooks worker's script: worker-entry.ts and the runtime's modules bundled by esbuild into
 * one CommonJS script, run with `new Worker(script, { eval: true })`.
 *
 * `npm run build:server` writes it beside the compiled module (dist/pbhooks/runtime/worker.bundle.js);
 * run from the sources (tsx: tests, `npm run dev`) there is none, and it is bundled here at first
 * use (a few hundred milliseconds, esbuild starting) and kept for the process. Either way it is the same modules as the main-thread
 * runtime imports, so there is one implementation.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

/** The file name of the prebuilt bundle, beside this module in dist/. */
export const BUNDLE_FILE = 'worker.bundle.js';

let script: string | undefined;

export function workerScript(): string {
  if (script !== undefined) return script;
  const here = fileURLToPath(import.meta.url);
  const prebuilt = fileURLToPath(new URL(`./${BUNDLE_FILE}`, import.meta.url));
  if (here.endsWith('.js') && existsSync(prebuilt)) script = readFileSync(prebuilt, 'utf8');
  else script = bundleWorker(fileURLToPath(new URL(here.endsWith('.ts') ? './worker-entry.ts' : './worker-entry.js', import.meta.url)));
  return script;
}

/** Bundles the worker's entry module (its path) into one script: what build-server.mjs writes too. */
export function bundleWorker(entry: string): string {
  // esbuild is loaded only here: a build from dist never needs it at run time.
  const esbuild = createRequire(import.meta.url)('esbuild') as typeof import('esbuild');
  const out = esbuild.buildSync({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    // Class names (`Record`, `Collection`) stay PocketBase's even where the bundle renames a binding.
    keepNames: true,
    logLevel: 'silent',
  });
  return out.outputFiles[0].text;
}
