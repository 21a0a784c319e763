import type { IncomingMessage } from 'node:http';

/**
 * `/api/logs/` answers as `/api/logs`: PocketBase drops a trailing slash from API paths (v0.22 strips
 * it before routing), and clients written for it send one. Only API paths: the dashboard and the
 * public folder give a trailing slash a meaning of their own (a folder).
 */
export function withoutApiTrailingSlash(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const path = q < 0 ? url : url.slice(0, q);
  if (!path.startsWith('/api/') || path.length <= 5 || !path.endsWith('/')) return url;
  const trimmed = path.replace(/\/+$/, '');
  return q < 0 ? trimmed : trimmed + url.slice(q);
}
