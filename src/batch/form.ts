import { badRequest } from '../errors.ts';
import type { StagedFile } from '../files/staged.ts';
import { type FileLimit, isUnsafeKey, type MultipartForm } from '../files/uploads.ts';
import { batchFailed, invalidBatch } from './failure.ts';
import { type BatchRequest, parseBatch } from './request.ts';

/** A file part's key: `requests.<index>.<field>` (the SDKs' form) or `requests[<index>].<field>`. */
const FILE_KEY = /^requests(?:\.(\d{1,6})\.|\[(\d{1,6})\]\.)(.+)$/;

function fileKey(key: string): { index: number; field: string } | undefined {
  const m = FILE_KEY.exec(key);
  return m ? { index: Number(m[1] ?? m[2]), field: m[3] } : undefined;
}

/**
 * Which parts of a multipart batch are files to stage: those under a request index, staged whole
 * (within the request's byte budget). The field they go to, and so its `maxSize`, is known only from
 * `@jsonPayload`, which the SDKs send after the files; the field type checks the size then. Other file
 * parts are read and ignored, as PocketBase does.
 */
export const batchFileLimit: FileLimit = (key) => (fileKey(key) ? Number.POSITIVE_INFINITY : undefined);

/**
 * Reads a multipart batch: `@jsonPayload` holds the batch document, files come as
 * `requests.<index>.<field>`. A file for an index the batch does not hold is a 400 naming that index.
 */
export function readBatchForm(form: MultipartForm, maxRequests: number): BatchRequest[] {
  const [stray] = form.fields.keys();
  if (stray !== undefined) {
    throw invalidBatch(`A multipart batch carries its requests in "@jsonPayload" and its files as "requests.<index>.<field>"; the form field ${JSON.stringify(stray.slice(0, 100))} is neither.`);
  }
  if (form.payloads.length === 0) throw invalidBatch('A multipart batch needs a "@jsonPayload" field holding {"requests": [...]}.', 'validation_required');
  // Several payloads merge, later keys winning, as for a record (the SDKs send one per JSON key).
  const doc: Record<string, unknown> = {};
  for (const payload of form.payloads) {
    for (const [key, value] of Object.entries(payload)) if (!isUnsafeKey(key)) doc[key] = value;
  }
  const requests = parseBatch(doc, maxRequests);
  for (const [key, files] of form.uploads) {
    const { index, field } = fileKey(key)!;
    const request = requests[index];
    if (!request) throw batchFailed(index, badRequest(`Files were sent for request ${index}, which the batch does not hold.`));
    request.uploads ??= new Map<string, StagedFile[]>();
    request.uploads.set(field, [...(request.uploads.get(field) ?? []), ...files]);
  }
  return requests;
}
