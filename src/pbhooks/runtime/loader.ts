/**
 * Evaluating hook files in the runtime's context: each `*.pb.js` file as a script (with `module`,
 * `exports` and a `require` of local CommonJS modules, as goja_nodejs gives), its API generation
 * guessed from what it uses, and every `onX(` it names made a registration.
 */
import fs from 'node:fs';
import nodePath from 'node:path';
import vm from 'node:vm';

/** v0.22 or ≥ 0.23, from what the file's source uses (v0.22 handlers never call `e.next()`). */
export function generation(src: string): 22 | 23 {
  if (/\.dao\(\)|onRecordBefore\w*Request|onRecordAfter\w*Request|onAfterBootstrap|onModelBefore|onModelAfter\w*\(|\$apis\.requestInfo|\.pathParam\(|\.queryParam\(|c\.get\(\s*["']authRecord/.test(src) && !/\be\.next\(\)/.test(src)) return 22;
  return 23;
}

/** `require(name)` inside the context: local modules only, each evaluated once per runtime. */
export function requireIn(context: vm.Context, modules: Map<string, any>, fromDir: string): (name: string) => any {
  return (name: string) => {
    const p = String(name);
    if (!p.startsWith('.') && !nodePath.isAbsolute(p)) throw new Error(`require("${p}"): only local modules (in pb_hooks) load in Cairn's pb_hooks`);
    let file = nodePath.resolve(fromDir, p);
    if (!fs.existsSync(file) && fs.existsSync(file + '.js')) file += '.js';
    const cached = modules.get(file);
    if (cached) return cached.exports;
    const module: any = { exports: {} };
    modules.set(file, module);
    const src = fs.readFileSync(file, 'utf8');
    const fn = vm.runInContext(`(function (module, exports, require, __filename, __dirname) {${src}\n})`, context, { filename: file });
    fn(module, module.exports, requireIn(context, modules, nodePath.dirname(file)), file, nodePath.dirname(file));
    return module.exports;
  };
}
