// The import graph of src/, read with TypeScript's own pre-processor (static, re-exported, type-only
// and dynamic imports alike: a type-only import is still a dependency one room has on another, and
// a cycle through one still means the two rooms cannot be read, tested or moved apart).
import { readFileSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

export const srcDir = path.resolve(import.meta.dirname, '../../src');

/** Every .ts file under `dir`, as paths relative to src/ with forward slashes. */
export function sourceFiles(dir = srcDir): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const entry of readdirSync(d)) {
      const full = path.join(d, entry);
      if (statSync(full).isDirectory()) walk(full);
      else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts')) out.push(path.relative(srcDir, full).split(path.sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** The src/ files one file imports (relative specifiers only; packages are outside the graph). */
export function importsOf(file: string, known: Set<string>): string[] {
  const text = readFileSync(path.join(srcDir, file), 'utf8');
  const { importedFiles } = ts.preProcessFile(text, true, true);
  const out = new Set<string>();
  for (const { fileName } of importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), fileName));
    const candidates = [target, target.replace(/\.js$/, '.ts'), `${target}.ts`, `${target}/index.ts`];
    const hit = candidates.find((c) => known.has(c));
    if (hit) out.add(hit);
  }
  return [...out].sort();
}

export function importGraph(): Map<string, string[]> {
  const files = sourceFiles();
  const known = new Set(files);
  return new Map(files.map((f) => [f, importsOf(f, known)]));
}

/** Strongly connected components with more than one file, or a file importing itself (Tarjan). */
export function cycles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

/** One path around a component, for a readable failure: a → b → … → a. */
export function loopThrough(component: string[], graph: Map<string, string[]>): string[] {
  const members = new Set(component);
  const start = component[0];
  const previous = new Map<string, string>();
  const queue = [start];
  const seen = new Set([start]);
  while (queue.length > 0) {
    const v = queue.shift()!;
    for (const w of graph.get(v) ?? []) {
      if (!members.has(w)) continue;
      if (w === start) {
        const pathBack = [v];
        while (pathBack[0] !== start) pathBack.unshift(previous.get(pathBack[0])!);
        return [...pathBack, start];
      }
      if (!seen.has(w)) {
        seen.add(w);
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return component;
}
