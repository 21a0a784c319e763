import { createHash } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { gzipSync } from 'node:zlib';

/** A file of the dashboard's build, ready to send. */
export interface Asset {
  body: Buffer;
  /** The body compressed with gzip, when that is smaller. */
  gzip?: Buffer;
  type: string;
  cacheControl: string;
  etag: string;
}

export type AssetLookup = { kind: 'asset'; asset: Asset } | { kind: 'not-built' } | { kind: 'not-found' };

export const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.webp': 'image/webp',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.avif': 'image/avif',
  '.woff': 'font/woff',
  '.ttf': 'font/ttf',
  '.wasm': 'application/wasm',
  '.pdf': 'application/pdf',
  '.xml': 'application/xml; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
  '.mp4': 'video/mp4',
  '.webm': 'video/webm',
  '.mp3': 'audio/mpeg',
};

const COMPRESSIBLE = new Set(['.html', '.js', '.mjs', '.css', '.json', '.svg', '.txt', '.map']);

// Vite names what it emits under assets/ after a hash of the content, so a cached copy can never be
// stale; everything else (index.html above all) is revalidated on each load.
const HASHED = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

/**
 * The dashboard's built files (`dashboard/dist`), served at `/_/`. Paths that are not files fall back
 * to index.html, so the app's own routes survive a reload; a path that looks like a file (an
 * extension, or under assets/) and does not exist is a 404 instead, so a stale chunk is not answered
 * with HTML. Files are read on demand and kept with their gzip form until they change on disk.
 */
export class DashboardAssets {
  private readonly cache = new Map<string, { mtimeMs: number; size: number; asset: Asset }>();

  constructor(readonly dir: string) {}

  async find(urlPath: string): Promise<AssetLookup> {
    const index = path.join(this.dir, 'index.html');
    if (!(await isFile(index))) return { kind: 'not-built' };
    const relative = safeRelative(urlPath);
    if (relative === undefined) return { kind: 'not-found' };
    if (relative !== '') {
      const file = path.join(this.dir, relative);
      if (await isFile(file)) return { kind: 'asset', asset: await this.load(file, relative.startsWith('assets/') ? HASHED : REVALIDATE) };
      if (relative.startsWith('assets/') || path.extname(relative) !== '') return { kind: 'not-found' };
    }
    return { kind: 'asset', asset: await this.load(index, REVALIDATE) };
  }

  private async load(file: string, cacheControl: string): Promise<Asset> {
    const info = await stat(file);
    const cached = this.cache.get(file);
    if (cached && cached.mtimeMs === info.mtimeMs && cached.size === info.size) return cached.asset;
    const body = await readFile(file);
    const ext = path.extname(file).toLowerCase();
    const compressed = COMPRESSIBLE.has(ext) ? gzipSync(body) : undefined;
    const asset: Asset = {
      body,
      gzip: compressed && compressed.length < body.length ? compressed : undefined,
      type: TYPES[ext] ?? 'application/octet-stream',
      cacheControl,
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
    };
    this.cache.set(file, { mtimeMs: info.mtimeMs, size: info.size, asset });
    return asset;
  }
}

async function isFile(file: string): Promise<boolean> {
  try {
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/**
 * The path below the build folder a request names, or undefined for anything that could leave it or
 * name a hidden file: `..` segments, encoded slashes and backslashes, NUL bytes, dot files.
 */
export function safeRelative(urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.includes('\\')) return undefined;
  const segments = decoded.split('/').filter((s) => s !== '');
  if (segments.some((s) => s.startsWith('.'))) return undefined;
  return segments.join('/');
}
