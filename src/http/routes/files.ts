import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Readable } from 'node:stream';
import { isInlineType } from '../../files/content-type.ts';
import type { FileDownload, FileService } from '../../files/download.ts';
import { ApiError, badRequest, isApiError, notFound } from '../../errors.ts';
import { notModified, rangeOf, weakEtag } from '../conditional.ts';
import { type Database, DEFAULT_DATABASE, type DatabaseRegistry } from '../../storage/index.ts';

type FileParams = {
  Params: { collection: string; recordId: string; filename: string };
  Querystring: Record<string, string | string[] | undefined>;
};

/** As PocketBase, cached for 30 days and reusable for a day while revalidating. */
const PUBLIC_CACHE = 'max-age=2592000, stale-while-revalidate=86400';
/** Protected content stays out of shared caches and is re-checked on every use. */
const PROTECTED_CACHE = 'private, no-store';
const TRUE_VALUES = new Set(['1', 't', 'true', 'yes']);

function one(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The database of a download: `x-dbname`, or `?db=` for URLs that cannot carry headers (`<img src>`,
 * PocketBase's `pb.files.getUrl(record, name, {db})`), else `main`. An unknown database is a 404 like
 * any other unknown path.
 */
async function databaseOf(req: FastifyRequest<FileParams>, registry: DatabaseRegistry): Promise<{ name: string; db: Database }> {
  const header = req.headers['x-dbname'];
  const fromHeader = typeof header === 'string' && header !== '' ? header : undefined;
  const fromQuery = one(req.query.db) || undefined;
  if (fromHeader && fromQuery && fromHeader !== fromQuery) throw badRequest('The x-dbname header and the db parameter name different databases.');
  const name = fromHeader ?? fromQuery ?? DEFAULT_DATABASE;
  try {
    return { name, db: await registry.served(name) };
  } catch (err) {
    if (isApiError(err) && err.status < 500) throw notFound();
    throw err;
  }
}

function etagOf(file: FileDownload): string {
  return weakEtag(file.size, file.modified);
}

async function send(req: FastifyRequest<FileParams>, reply: FastifyReply, file: FileDownload): Promise<FastifyReply> {
  const download = TRUE_VALUES.has((one(req.query.download) ?? '').toLowerCase());
  const disposition = !download && isInlineType(file.contentType) ? 'inline' : 'attachment';
  const etag = etagOf(file);
  const fresh = notModified(req, etag, file.modified);
  const ifRange = req.headers['if-range'];
  const range = fresh || (ifRange !== undefined && ifRange !== etag) ? undefined : rangeOf(req.headers.range, file.size);
  const length = range === undefined ? file.size : range === 'unsatisfiable' ? 0 : range.end - range.start + 1;
  // Fastify answers HEAD through this GET handler; a stream keeps the Content-Length set below.
  const sendsContent = !fresh && range !== 'unsatisfiable' && req.method !== 'HEAD' && length > 0;
  // Opened before any header is set: storage that fails here (a bucket out of reach) is an error
  // answer of its own, not a file's headers with an error body.
  const content = sendsContent ? await file.read(range ?? undefined) : Readable.from([]);
  reply.headers({
    'content-type': file.contentType,
    'content-disposition': `${disposition}; filename="${file.name}"`,
    'cache-control': file.protected ? PROTECTED_CACHE : PUBLIC_CACHE,
    etag,
    'last-modified': file.modified.toUTCString(),
    'accept-ranges': 'bytes',
    'x-content-type-options': 'nosniff',
    // Uploaded content never runs as a page of this origin, whatever it contains.
    'content-security-policy': "default-src 'none'; media-src 'self'; style-src 'unsafe-inline'; sandbox",
  });
  if (fresh) return reply.status(304).send();
  if (range === 'unsatisfiable') {
    reply.header('content-range', `bytes */${file.size}`);
    throw new ApiError(416, 'The requested range is not satisfiable.');
  }
  reply.header('content-length', String(length));
  if (range) reply.status(206).header('content-range', `bytes ${range.start}-${range.end}/${file.size}`);
  return reply.send(content);
}

/** Downloads (`GET /api/files/...`) and file tokens (`POST /api/files/token`), as PocketBase v0.22. */
export function fileRoutes(files: FileService, registry: DatabaseRegistry) {
  return async (app: FastifyInstance): Promise<void> => {
    // No Authorization header here: links in pages carry none, so protected files take `?token=`.
    const downloadConfig = { config: { database: false, authenticate: false } } as const;
    app.get<FileParams>('/api/files/:collection/:recordId/:filename', downloadConfig, async (req, reply) => {
      const { name, db } = await databaseOf(req, registry);
      const file = await files.open({
        dbName: name,
        db,
        collection: req.params.collection,
        recordId: req.params.recordId,
        filename: req.params.filename,
        token: one(req.query.token) || undefined,
        thumb: one(req.query.thumb) || undefined,
        request: req.ctx.request,
      });
      return send(req, reply, file);
    });

    app.post('/api/files/token', async (req) => ({ token: await files.tokens.issue(req.ctx) }));
  };
}
