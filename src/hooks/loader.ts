import { mkdtempSync, rmSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Message, Plugin } from 'esbuild';
import { hookApp, type ServiceSlot } from './facade.ts';
import { HookSet } from './registry.ts';
import type { PbHooksLoader } from './pb-loader.ts';
import type { HookSetup } from './types.ts';
import { HookLoadError } from './load-error.ts';
import { folderFiles, isPbHookFile } from '../lib/folder-files.ts';

/** Hook files: these extensions, directly in the hooks directory (subfolders hold their own modules). */
const HOOK_FILE = /\.(ts|mts|js|mjs)$/;

export { HookLoadError };

/** The hook files of `dir`, in name order; none when it does not exist. */
export function hookFiles(dir: string): string[] {
  // A PocketBase file put among them (`*.pb.js`) runs as pb_hooks, not as a module (pbFilesIn).
  const isHook = (name: string) => HOOK_FILE.test(name) && !name.endsWith('.d.ts') && !isPbHookFile(name) && !name.startsWith('.');
  return folderFiles(dir, isHook, unreadable(dir)).map((name) => path.join(dir, name));
}

/** The `*.pb.js` files directly in the hooks directory, in name order: they run as pb_hooks (API contract §24). */
export function pbFilesIn(dir: string): string[] {
  return folderFiles(dir, isPbHookFile, unreadable(dir)).map((name) => path.join(dir, name));
}

const unreadable = (dir: string) => (err: Error) => new HookLoadError(`cannot read the hooks directory: ${err.message}`, dir);

/**
 * The module application code imports as `cairn`: this very instance's public module, so a hook's
 * `BadRequestError` is the class the server checks for, whichever copy of the package the app has.
 */
function ownEntry(): string {
  const here = import.meta.url;
  return new URL(here.endsWith('.ts') ? '../index.ts' : '../index.js', here).href;
}

/**
 * Resolves what the bundle leaves outside: `cairn` to this instance, Node's built-ins as they are,
 * and every other bare import from the importing file's folder (the app's own `node_modules`), as an
 * absolute URL so the bundle, written elsewhere, imports the same file.
 */
function externals(): Plugin {
  const inner = Symbol('inner resolve');
  return {
    name: 'cairn-hook-externals',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData === inner || path.isAbsolute(args.path)) return undefined;
        if (args.path === 'cairn') return { path: ownEntry(), external: true };
        if (isBuiltin(args.path)) return { path: args.path, external: true };
        const found = await build.resolve(args.path, { resolveDir: args.resolveDir, kind: args.kind, importer: args.importer, pluginData: inner });
        if (found.errors.length > 0) return { errors: found.errors };
        return { path: pathToFileURL(found.path).href, external: true };
      });
    },
  };
}

/** An esbuild error as a load error; esbuild names files relative to the hooks directory. */
function fromMessage(message: Message | undefined, dir: string, fallback: string): HookLoadError {
  if (!message) return new HookLoadError(fallback);
  const loc = message.location;
  return new HookLoadError(message.text, loc?.file ? path.resolve(dir, loc.file) : undefined, loc?.line, loc ? loc.column + 1 : undefined);
}

const FRAME_LOCATION = /:(\d+):(\d+)\)?$/;

/**
 * Where an error thrown while loading happened: the first stack frame (source-mapped to the
 * TypeScript) in a file under the hooks directory, a module of a subfolder included.
 */
function located(err: unknown, dir: string | undefined, fallbackFile: string): HookLoadError {
  const reason = err instanceof Error ? err.message : String(err);
  const stack = err instanceof Error ? (err.stack ?? '') : '';
  if (dir) {
    const prefix = dir.endsWith(path.sep) ? dir : dir + path.sep;
    for (const line of stack.split('\n')) {
      const at = line.indexOf(prefix);
      const m = at < 0 ? null : FRAME_LOCATION.exec(line);
      if (m) return new HookLoadError(reason, line.slice(at, line.length - m[0].length), Number(m[1]), Number(m[2]));
    }
  }
  return new HookLoadError(reason, fallbackFile);
}

/**
 * One load of the hooks: the files of `dir` (TypeScript stripped by esbuild, not type-checked; each
 * file's relative imports bundled with it, modules shared by several files bundled once and shared),
 * then `inline` setups (library mode), each given an `app` that registers into one new `HookSet`.
 * The bundle is written under `workDir` (source maps inline, so stack traces name the hook files and
 * lines). Throws a `HookLoadError` naming the file and line of the first failure.
 */
export async function loadHooks(dir: string | undefined, inline: readonly HookSetup[], slot: ServiceSlot, workDir: string, pb?: { dir?: string; timeoutMs: number; load?: PbHooksLoader }): Promise<HookSet> {
  const set = new HookSet();
  try {
    await loadTypeScript(dir, inline, slot, workDir, set);
    // PocketBase's pb_hooks after the TypeScript hooks (API contract §22).
    // pb_hooks' own folder, then `*.pb.js` files given among the TypeScript hooks (one pool runs both).
    const extra = dir ? pbFilesIn(dir) : [];
    const pbDir = pb?.dir ?? (extra.length > 0 ? dir : undefined);
    const loaded = pb?.load && pbDir ? await pb.load(pbDir, set, slot, pb.timeoutMs, extra) : undefined;
    if (loaded) {
      set.pb = loaded;
      set.files.push(...loaded.pool.files);
    }
  } catch (err) {
    set.pb?.pool.close();
    throw err;
  }
  return set;
}

async function loadTypeScript(dir: string | undefined, inline: readonly HookSetup[], slot: ServiceSlot, workDir: string, set: HookSet): Promise<void> {
  const files = dir ? hookFiles(dir) : [];
  if (files.length > 0) {
    // Only instances with hook files pay for esbuild (a child process) and source-mapped stacks.
    process.setSourceMapsEnabled(true);
    const esbuild = await import('esbuild');
    const outdir = mkdtempSync(path.join(workDir, 'gen-'));
    let outputs: Record<string, { entryPoint?: string }>;
    try {
      const result = await esbuild.build({
        entryPoints: files,
        absWorkingDir: dir,
        bundle: true,
        splitting: true,
        format: 'esm',
        platform: 'node',
        target: 'node20',
        outdir,
        entryNames: '[name]-[hash]',
        // .mjs: modules whatever the folder they are written to (no package.json says "module" there).
        outExtension: { '.js': '.mjs' },
        sourcemap: 'inline',
        metafile: true,
        logLevel: 'silent',
        plugins: [externals()],
      });
      outputs = result.metafile.outputs;
    } catch (err) {
      throw fromMessage((err as { errors?: Message[] }).errors?.[0], dir!, err instanceof Error ? err.message : String(err));
    } finally {
      // esbuild's service process is not needed between loads (the next build starts it again).
      await esbuild.stop();
    }
    const byEntry = new Map<string, string>();
    for (const [output, info] of Object.entries(outputs)) {
      if (info.entryPoint) byEntry.set(path.resolve(dir!, info.entryPoint), path.resolve(dir!, output));
    }
    for (const file of files) {
      const output = byEntry.get(file);
      if (!output) throw new HookLoadError('the bundler produced no module for this file', file);
      let module: { default?: unknown };
      try {
        module = await import(pathToFileURL(output).href);
      } catch (err) {
        throw located(err, dir, file);
      }
      await register(module.default, file, set, slot, dir);
    }
  }
  for (const [i, setup] of inline.entries()) await register(setup, `<inline #${i + 1}>`, set, slot, dir);
}

async function register(setup: unknown, source: string, set: HookSet, slot: ServiceSlot, dir: string | undefined): Promise<void> {
  if (typeof setup !== 'function') {
    throw new HookLoadError('the default export must be a function `(app) => { … }` (use `export default defineHooks((app) => { … })`)', source);
  }
  try {
    await (setup as HookSetup)(hookApp(slot, source, set));
  } catch (err) {
    throw located(err, dir, source);
  }
  set.files.push(source);
}

/** A directory for the bundles of this process's loads; `dispose` removes it. */
export function hookWorkDir(): { dir: string; dispose(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-hooks-'));
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

