import { stat } from 'node:fs/promises';
import path from 'node:path';
import { TYPES } from '../dashboard/assets.ts';

/** A file a static route sends. */
export interface StaticFile {
  file: string;
  size: number;
  type: string;
}

async function fileAt(file: string): Promise<StaticFile | undefined> {
  try {
    const info = await stat(file);
    if (!info.isFile()) return undefined;
    return { file, size: info.size, type: TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream' };
  } catch {
    return undefined;
  }
}

/**
 * The file a pb_hooks static route (`$apis.static(dir, indexFallback)`, v0.22's
 * `$apis.staticDirectoryHandler`) answers `wildcard` with, as PocketBase does: the file below `dir`,
 * a folder's index.html, else (with `indexFallback`) `dir/index.html`; undefined for a 404. A path
 * that would leave `dir` (`..` segments, backslashes, NUL bytes) is never a file.
 */
export async function findStaticFile(dir: string, wildcard: string, indexFallback: boolean): Promise<StaticFile | undefined> {
  const root = path.resolve(dir);
  const fallback = () => (indexFallback ? fileAt(path.join(root, 'index.html')) : Promise.resolve(undefined));
  if (wildcard.includes('\0') || wildcard.includes('\\')) return undefined;
  const segments = wildcard.split('/').filter((s) => s !== '' && s !== '.');
  if (segments.includes('..')) return undefined;
  const target = path.join(root, ...segments);
  if (target !== root && !target.startsWith(root + path.sep)) return undefined;
  const found = (await fileAt(target)) ?? (await fileAt(path.join(target, 'index.html')));
  return found ?? fallback();
}
