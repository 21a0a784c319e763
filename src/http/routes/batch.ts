import { type Readable, Transform } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import type { BatchResult, BatchService } from '../../batch/service.ts';
import { batchFileLimit } from '../../batch/form.ts';
import type { FileStore } from '../../files/store.ts';
import type { UploadPart } from '../../files/uploads.ts';
import { madeJson } from '../../records/serialize.ts';
import { declaredLength } from '../record-body.ts';

/**
 * The answers as JSON text, each record taking the text its write already made for a webhook event
 * when there is one (as the record routes do).
 */
function answer(reply: FastifyReply, results: BatchResult[]): string {
  reply.type('application/json; charset=utf-8');
  return `[${results.map((r) => `{"status":${r.status},"body":${madeJson(r.body) ?? JSON.stringify(r.body)}}`).join(',')}]`;
}

/** The most a JSON batch may ever be; the `batch.maxBodySize` setting in force is checked as it streams in. */
const BATCH_BODY_CEILING = 1024 * 1024 * 1024;

/** Counts a body's bytes as it streams to the parser: 413 past `limit`. */
function limited(payload: Readable, limit: number): Readable {
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      size += chunk.length;
      if (size > limit) done(tooLarge(limit));
      else done(null, chunk);
    },
  });
  payload.on('error', (err) => meter.destroy(err));
  // Fastify's body reader listens from when it starts reading; a client gone before then must not
  // leave the error unheard, which would end the process.
  meter.on('error', () => {});
  return payload.pipe(meter);
}

/**
 * Whether the body is multipart, asked before it is parsed: `req.isMultipart()` is only set by the
 * multipart parser, which runs after `preParsing`.
 */
function sendsMultipart(req: FastifyRequest): boolean {
  return /^multipart\/form-data\b/i.test(req.headers['content-type'] ?? '');
}

const tooLarge = (limit: number) => new ApiError(413, `The batch is larger than the limit of ${limit} bytes.`, {}, { connection: 'close' });

/**
 * `POST /api/batch` (API contract §11): a JSON batch, or a multipart one with files. Thin: parse, run,
 * answer. The `batch` settings act on each batch (service.ts); a JSON body is held to `maxBodySize`
 * (0: CAIRN_BODY_LIMIT) here, a multipart one's files to the upload limit as record uploads are.
 */
export function batchRoutes(batch: BatchService, files: FileStore, bodyLimit: number) {
  return async (app: FastifyInstance): Promise<void> => {
    const preParsing = async (req: FastifyRequest, _reply: FastifyReply, payload: Readable) => {
      const limits = await batch.limits();
      // A multipart body is read by busboy from the request itself (`req.parts()`), its sizes held to
      // the upload limits there: a meter here would be a second reader nobody drains, which stalls the
      // request once its buffer is full.
      if (sendsMultipart(req)) return payload;
      const limit = limits.maxBodySize > 0 ? limits.maxBodySize : bodyLimit;
      if ((declaredLength(req) ?? 0) > limit) throw tooLarge(limit);
      return limited(payload, limit);
    };
    app.post('/api/batch', { config: { multipart: true }, bodyLimit: BATCH_BODY_CEILING, preParsing }, async (req, reply) => {
      if (!req.isMultipart()) return answer(reply, await batch.run(req.ctx, req.body));
      // As for record uploads: sizes are checked while streaming, busboy's own file limit raised past them.
      const parts = req.parts({ limits: { fileSize: files.requestLimit + 1 } });
      const form = await files.receiveForm(parts as AsyncIterable<UploadPart>, batchFileLimit, declaredLength(req));
      try {
        return answer(reply, await batch.runForm(req.ctx, form));
      } finally {
        await form.settle();
      }
    });
  };
}
