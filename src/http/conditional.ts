import type { FastifyRequest } from 'fastify';

/** A single `bytes=` range within `size`, undefined to send everything, or 'unsatisfiable'. */
export function rangeOf(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(0, size - Number(m[2]));
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return 'unsatisfiable';
  return { start, end };
}

/** Whether the client's copy (`If-None-Match`, else `If-Modified-Since`) is still the current one. */
export function notModified(req: FastifyRequest, etag: string, modified: Date): boolean {
  const ifNoneMatch = req.headers['if-none-match'];
  if (ifNoneMatch !== undefined) return ifNoneMatch.split(',').some((t) => t.trim() === etag || t.trim() === `W/${etag}` || t.trim() === '*');
  const since = Date.parse(req.headers['if-modified-since'] ?? '');
  return Number.isFinite(since) && Math.floor(modified.getTime() / 1000) <= Math.floor(since / 1000);
}

/** A validator of a file's content from its size and modification time. */
export function weakEtag(size: number, modified: Date): string {
  return `"${size.toString(16)}-${modified.getTime().toString(16)}"`;
}
