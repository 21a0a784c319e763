import type { FastifyRequest } from 'fastify';
import type { Collection } from '../collections/model.ts';
import type { FileStore } from '../files/store.ts';
import type { UploadPart } from '../files/uploads.ts';

/** The body length the client declared, for an early 413. */
export function declaredLength(req: FastifyRequest): number | undefined {
  const n = Number(req.headers['content-length']);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Hands a record write its input: the JSON body, or a multipart body with its files staged. Uploads
 * that do not end up in a committed record are removed once the write is over, whatever its outcome.
 */
export async function withRecordBody<T>(req: FastifyRequest, files: FileStore, collection: Collection, write: (input: unknown) => Promise<T>): Promise<T> {
  if (!req.isMultipart()) {
    files.refuseInlineFiles(collection, req.body);
    return write(req.body ?? {});
  }
  // Sizes are checked while streaming (per field: 400, per request: 413); busboy's own file limit is
  // raised so that it cannot cut a file short before those checks see it.
  const parts = req.parts({ limits: { fileSize: files.requestLimit + 1 } });
  const batch = await files.receive(collection, parts as AsyncIterable<UploadPart>, declaredLength(req));
  // Rules read `@request.body`; for multipart it is the form's values, uploads by their stored names.
  req.body = batch.body;
  try {
    return await write(batch.input);
  } finally {
    await batch.settle();
  }
}
