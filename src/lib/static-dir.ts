import { stat } from 'node:fs/promises';
import path from 'node:path';

/** What a GET of a static folder answers (PocketBase's `apis.Static`, which serves `pb_public`). */
export type StaticAnswer =
  | { kind: 'file'; file: string; size: number; modified: Date }
  | { kind: 'redirect'; location: string }
  | { kind: 'not-found' };

const INDEX = 'index.html';

async function statOf(file: string): Promise<{ dir: boolean; size: number; modified: Date } | undefined> {
  try {
    const info = await stat(file);
    return { dir: info.isDirectory(), size: info.size, modified: info.mtime };
  } catch {
    return undefined;
  }
}

/**
 * A redirect target that stays on this site: leading slashes and backslashes collapse to one slash, so
 * `//evil.example` cannot become a link to another host (PocketBase's `safeRedirectPath`).
 */
function sameSite(location: string): string {
  const local = /^[/\\]{2,}/.test(location) ? `/${location.replace(/^[/\\]+/, '')}` : location;
  return encodeURI(local);
}

/**
 * Decides, as PocketBase's `apis.Static(fsys, indexFallback)` does, what `wildcard` (the decoded path
 * below the folder's mount) answers; `urlPath` is the whole decoded request path, for redirects.
 *
 * - A file is served; its URL with a trailing slash, or ending in `index.html`, is redirected to its
 *   canonical form (`/a.css/` → `/a.css`, `/docs/index.html` → `/docs/`).
 * - A folder without the trailing slash is redirected to it; with it, its `index.html` is served.
 * - Anything else (missing, or a path that would leave the folder: `..` after normalisation, a NUL
 *   byte, a backslash) is not found, or with `indexFallback` the folder's own `index.html`, so a
 *   single-page app's deep links load the app. Nothing outside `root` is ever read through a path.
 */
export async function resolveStatic(root: string, wildcard: string, urlPath: string, indexFallback: boolean): Promise<StaticAnswer> {
  const base = path.resolve(root);
  const fallback = async (filename: string): Promise<StaticAnswer> => {
    if (indexFallback && filename !== INDEX) {
      const index = await statOf(path.join(base, INDEX));
      if (index && !index.dir) return { kind: 'file', file: path.join(base, INDEX), size: index.size, modified: index.modified };
    }
    return { kind: 'not-found' };
  };
  const filename = path.posix.normalize(wildcard.replace(/^\/+/, '') || '.').replace(/\/+$/, '') || '.';
  if (filename === '..' || filename.startsWith('../') || filename.includes('\0') || filename.includes('\\')) return fallback(filename);
  const target = path.join(base, filename);
  if (target !== base && !target.startsWith(base + path.sep)) return fallback(filename);
  const found = await statOf(target);
  if (!found) return fallback(filename);
  if (found.dir) {
    if (!urlPath.endsWith('/')) return { kind: 'redirect', location: sameSite(`${urlPath}/`) };
    const index = await statOf(path.join(target, INDEX));
    if (index && !index.dir) return { kind: 'file', file: path.join(target, INDEX), size: index.size, modified: index.modified };
    return fallback(filename);
  }
  if (urlPath.endsWith('/')) {
    const trimmed = urlPath.replace(/\/+$/, '');
    if (trimmed !== '') return { kind: 'redirect', location: sameSite(trimmed) };
  } else if (urlPath.endsWith(`/${INDEX}`)) {
    return { kind: 'redirect', location: sameSite(urlPath.slice(0, -INDEX.length)) };
  }
  return { kind: 'file', file: target, size: found.size, modified: found.modified };
}
