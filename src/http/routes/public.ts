import type { FastifyReply, FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { TYPES } from '../../dashboard/assets.ts';
import { ApiError, badRequest, notFound } from '../../errors.ts';
import { resolveStatic } from '../../lib/static-dir.ts';
import { notModified, rangeOf, weakEtag } from '../conditional.ts';

/** Paths that stay Cairn's whatever the folder holds: the API (JSON 404s) and the console. */
const RESERVED = /^\/(api|_)(\/|$)/;

/**
 * An app's public folder (PocketBase's `pb_public`, API contract §24) served at `/`: what no route of
 * Cairn's or of the hooks answers, for GET and HEAD. The folder is looked at on each request, so one
 * made while the server runs is served at once.
 */
export class PublicFolder {
  constructor(
    readonly dir: string,
    readonly indexFallback: boolean,
  ) {}

  /** Whether the folder is there (without it, `GET /` is the redirect to the console). */
  async present(): Promise<boolean> {
    try {
      return (await stat(this.dir)).isDirectory();
    } catch {
      return false;
    }
  }

  /** Whether a request of `method` for `urlPath` is the folder's to answer. */
  serves(method: string, urlPath: string): boolean {
    return (method === 'GET' || method === 'HEAD') && !RESERVED.test(urlPath);
  }

  /** Answers a GET or HEAD with a file of the folder, a redirect to a canonical path, or a 404. */
  readonly handle = async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const raw = req.url;
    const q = raw.indexOf('?');
    let urlPath: string;
    try {
      urlPath = decodeURIComponent(q < 0 ? raw : raw.slice(0, q));
    } catch {
      throw badRequest('Malformed URL.');
    }
    const answer = await resolveStatic(this.dir, urlPath, urlPath, this.indexFallback);
    if (answer.kind === 'not-found') throw notFound();
    if (answer.kind === 'redirect') return reply.redirect(answer.location, 301);
    return sendFile(req, reply, answer.file, answer.size, answer.modified);
  };
}

async function sendFile(req: FastifyRequest, reply: FastifyReply, file: string, size: number, modified: Date): Promise<FastifyReply> {
  const etag = weakEtag(size, modified);
  const fresh = notModified(req, etag, modified);
  const ifRange = req.headers['if-range'];
  const range = fresh || (ifRange !== undefined && ifRange !== etag) ? undefined : rangeOf(req.headers.range, size);
  const length = range === undefined ? size : range === 'unsatisfiable' ? 0 : range.end - range.start + 1;
  reply.headers({
    'content-type': TYPES[path.extname(file).toLowerCase()] ?? 'application/octet-stream',
    etag,
    'last-modified': modified.toUTCString(),
    'accept-ranges': 'bytes',
    'x-content-type-options': 'nosniff',
  });
  if (fresh) return reply.status(304).send();
  if (range === 'unsatisfiable') {
    reply.header('content-range', `bytes */${size}`);
    throw new ApiError(416, 'The requested range is not satisfiable.');
  }
  reply.header('content-length', String(length));
  if (range) reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${size}`);
  // Fastify answers HEAD through the GET handler; an empty stream keeps the Content-Length above.
  if (req.method === 'HEAD' || length === 0) return reply.send(Readable.from([]));
  return reply.send(createReadStream(file, range ? { start: range.start, end: range.end } : undefined));
}
