/**
 * `$filepath`: Go's path/filepath as PocketBase's JSVM binds it, with Go's answers where Node's path
 * module differs (Clean drops a trailing slash, Base of "" is ".", Ext of ".bashrc" is ".bashrc",
 * Join skips empty parts, Split keeps the slash on the directory). Slash-separated, as on the Linux
 * servers Cairn runs on. Also the FileInfo and DirEntry objects `$os` and walks hand out.
 */
import fs from 'node:fs';
import nodePath from 'node:path';

/** Go's fs.FileInfo of `p`. */
export function fileInfo(p: string, st: fs.Stats) {
  return {
    name: () => base(p),
    size: () => st.size,
    mode: () => st.mode,
    modTime: () => st.mtime.toISOString(),
    isDir: () => st.isDirectory(),
    sys: () => null,
  };
}

/** Go's fs.DirEntry of `name` in `dir` (from a directory listing's entry, or a walk's stat). */
export function dirEntry(dir: string, name: string, entry: Pick<fs.Dirent, 'isDirectory' | 'isSymbolicLink'>) {
  return {
    name: () => name,
    isDir: () => entry.isDirectory(),
    type: () => (entry.isDirectory() ? 0o20000000000 : entry.isSymbolicLink() ? 0o1000000000 : 0),
    info: () => fileInfo(join(dir, name), fs.lstatSync(join(dir, name))),
  };
}

/** The entries of a directory sorted by name, as Go's os.ReadDir gives them. */
export function readDirEntries(dir: string) {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => dirEntry(dir, e.name, e));
}

export function clean(p: string): string {
  if (p === '') return '.';
  const out = nodePath.posix.normalize(p);
  return out.length > 1 && out.endsWith('/') ? out.slice(0, -1) : out;
}

export function join(...parts: unknown[]): string {
  const given = parts.map(String).filter((p) => p !== '');
  return given.length === 0 ? '' : clean(given.join('/'));
}

export function base(p: string): string {
  if (p === '') return '.';
  const trimmed = p.replace(/\/+$/, '');
  return trimmed === '' ? '/' : trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

function dir(p: string): string {
  return clean(p.slice(0, p.lastIndexOf('/') + 1));
}

function ext(p: string): string {
  for (let i = p.length - 1; i >= 0 && p[i] !== '/'; i--) if (p[i] === '.') return p.slice(i);
  return '';
}

function split(p: string): [string, string] {
  const i = p.lastIndexOf('/');
  return [p.slice(0, i + 1), p.slice(i + 1)];
}

function rel(basePath: string, target: string): string {
  const [b, t] = [clean(basePath), clean(target)];
  if (b === t) return '.';
  if (b.startsWith('/') !== t.startsWith('/')) throw new Error(`Rel: can't make ${target} relative to ${basePath}`);
  // Both relative: anchored at a common root, which cancels out.
  return nodePath.posix.relative(b.startsWith('/') ? b : `/${b}`, t.startsWith('/') ? t : `/${t}`) || '.';
}

const hasMeta = (p: string) => /[*?[\\]/.test(p);

/** Go's filepath.Match: `*` and `?` within one path element, `[...]` classes (`^` negates), `\` escapes. */
export function match(pattern: string, name: string): boolean {
  let re = '^';
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i];
    if (ch === '*') re += '[^/]*';
    else if (ch === '?') re += '[^/]';
    else if (ch === '\\') {
      if (++i >= pattern.length) throw new Error('syntax error in pattern');
      re += escapeRe(pattern[i]);
    } else if (ch === '[') {
      const end = pattern.indexOf(']', i + 2);
      if (end === -1) throw new Error('syntax error in pattern');
      let body = pattern.slice(i + 1, end);
      const negated = body.startsWith('^');
      if (negated) body = body.slice(1);
      if (body === '') throw new Error('syntax error in pattern');
      re += `[${negated ? '^/' : ''}${body.replace(/[\]\\]/g, (c) => `\\${c}`)}]`;
      i = end;
    } else re += escapeRe(ch);
  }
  return new RegExp(`${re}$`).test(name);
}

const escapeRe = (c: string) => c.replace(/[.*+?^${}()|[\]\\/]/g, (m) => `\\${m}`);

export function glob(pattern: string): string[] {
  if (!hasMeta(pattern)) return fs.existsSync(pattern) ? [pattern] : [];
  const [d, file] = split(pattern);
  const parent = d === '' ? '.' : d === '/' ? '/' : d.slice(0, -1);
  const dirs = hasMeta(parent) ? glob(parent) : [parent];
  const out: string[] = [];
  for (const one of dirs) {
    let names: string[];
    try {
      if (!fs.statSync(one).isDirectory()) continue;
      names = fs.readdirSync(one).sort();
    } catch {
      continue;
    }
    for (const n of names) if (match(file, n)) out.push(join(one, n));
  }
  return out;
}

/** Go's Walk and WalkDir: `fn` for the root and everything under it, in lexical order; what it returns (an error) stops the walk and is thrown. */
function walkWith(root: string, visit: (p: string, entry: unknown) => unknown, asEntry: boolean): void {
  const step = (p: string) => {
    const st = fs.lstatSync(p);
    const out = visit(p, asEntry ? dirEntry(dir(p), base(p), st) : fileInfo(p, st));
    if (out !== undefined && out !== null && out !== false) throw out instanceof Error ? out : new Error(String(out));
    if (st.isDirectory()) for (const n of fs.readdirSync(p).sort()) step(join(p, n));
  };
  step(root);
}

export const $filepath = {
  base,
  clean,
  dir,
  ext,
  fromSlash: (p: string) => p,
  toSlash: (p: string) => p,
  glob,
  isAbs: (p: string) => p.startsWith('/'),
  join,
  match,
  rel,
  split,
  splitList: (p: string) => (p === '' ? [] : p.split(':')),
  walk: (root: string, fn: (p: string, info: unknown, err: unknown) => unknown) => walkWith(String(root), (p, info) => fn(p, info, null), false),
  walkDir: (root: string, fn: (p: string, entry: unknown, err: unknown) => unknown) => walkWith(String(root), (p, entry) => fn(p, entry, null), true),
};
