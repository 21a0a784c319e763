import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { unlink } from 'node:fs/promises';
import path from 'node:path';
import { type Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Collection, FieldDef } from '../collections/model.ts';
import { ApiError, badRequest, isApiError } from '../errors.ts';
import { randomId } from '../lib/ids.ts';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../lib/json-depth.ts';
import { detectFileType, SNIFF_BYTES } from './content-type.ts';
import { fileOptions } from './field.ts';
import { storedName } from './names.ts';
import { StagedFile } from './staged.ts';
import { isPlainObject } from '../lib/objects.ts';

/** A part of a `multipart/form-data` body, as the HTTP layer hands it over (no framework types). */
export type UploadPart =
  | { type: 'field'; fieldname: string; value: unknown; valueTruncated?: boolean }
  | { type: 'file'; fieldname: string; filename: string; file: Readable };

export interface ReceiveOptions {
  stagingDir: string;
  /** Most bytes one request may carry (files and fields together). */
  requestLimit: number;
}

/** The key the SDKs use for a part holding JSON-encoded values (typed, unlike form fields). */
const JSON_PAYLOAD = '@jsonPayload';

export function uploadTooLarge(limit: number): ApiError {
  // The rest of the body is not read; closing the connection keeps it from being parsed as a request.
  return new ApiError(413, `The upload is larger than the limit of ${limit} bytes.`, {}, { connection: 'close' });
}

/** Counts the bytes of a request as its parts stream in; 413 past the limit. */
class ByteBudget {
  private used = 0;
  constructor(readonly limit: number) {}
  spend(n: number): void {
    this.used += n;
    if (this.used > this.limit) throw uploadTooLarge(this.limit);
  }
}

/** A body the multipart parser cannot read is the client's fault; its own limit errors stay 413. */
export function malformedMultipart(err: unknown): unknown {
  if (isApiError(err) || (err as { statusCode?: number }).statusCode === 413) return err;
  const reason = err instanceof Error && err.message ? `: ${err.message}` : '';
  return badRequest(`Failed to load the submitted data: invalid multipart body${reason}.`);
}

/** The parts of a body; errors of the parser itself (not of what consumes the parts) become 400s. */
async function* readParts(parts: AsyncIterable<UploadPart>): AsyncGenerator<UploadPart> {
  const it = parts[Symbol.asyncIterator]();
  for (;;) {
    let next: IteratorResult<UploadPart>;
    try {
      next = await it.next();
    } catch (err) {
      throw malformedMultipart(err);
    }
    if (next.done) return;
    yield next.value;
  }
}

/** The file field a part's key names: `avatar`, `documents+` (append) or `+documents` (prepend). */
export function fileFieldOf(collection: Collection, key: string): FieldDef | undefined {
  const name = key.endsWith('+') ? key.slice(0, -1) : key.startsWith('+') ? key.slice(1) : key;
  return collection.fields.find((f) => f.type === 'file' && f.name === name);
}

/**
 * The parser destroys the stream of a file the body ended in the middle of, sometimes before its
 * consumer gets to it; a pipeline from a stream already destroyed never settles, so that is checked
 * first. Either way the client sent a broken body: a 400, never a hung request or a 500.
 */
function truncated(stream: Readable): unknown {
  return stream.destroyed && !stream.readableEnded ? malformedMultipart(new Error('the body ended in the middle of a file')) : undefined;
}

async function drain(stream: Readable, budget: ByteBudget): Promise<void> {
  const broken = truncated(stream);
  if (broken) throw broken;
  try {
    for await (const chunk of stream) budget.spend((chunk as Buffer).length);
  } catch (err) {
    throw malformedMultipart(err);
  }
}

/**
 * Streams one file part to the staging directory. Past `maxSize` (the field's) the content is dropped
 * (the part is still read, within the request's budget) and the upload is marked too large.
 */
async function stage(part: Extract<UploadPart, { type: 'file' }>, maxSize: number, options: ReceiveOptions, budget: ByteBudget): Promise<StagedFile> {
  const tempPath = path.join(options.stagingDir, randomId(24));
  const head: Buffer[] = [];
  let headSize = 0;
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      try {
        budget.spend(chunk.length);
      } catch (err) {
        done(err as Error);
        return;
      }
      size += chunk.length;
      if (size > maxSize) {
        done();
        return;
      }
      if (headSize < SNIFF_BYTES) {
        head.push(chunk.subarray(0, SNIFF_BYTES - headSize));
        headSize += Math.min(chunk.length, SNIFF_BYTES - headSize);
      }
      done(null, chunk);
    },
  });
  const broken = truncated(part.file);
  if (broken) throw broken;
  const out = createWriteStream(tempPath, { flags: 'wx', mode: 0o600 });
  try {
    await pipeline(part.file, meter, out);
  } catch (err) {
    // A body that broke early fails the copy while the file may still be opening: the stream creates
    // it after all and then closes it, so the unlink waits for that or the file would stay behind.
    if (!out.closed) await once(out, 'close').catch(() => {});
    await unlink(tempPath).catch(() => {});
    // Not our limit and not a file system error: the body ended (or broke) in the middle of the file.
    if (!isApiError(err) && (err as NodeJS.ErrnoException).syscall === undefined) throw malformedMultipart(err);
    throw err;
  }
  if (size > maxSize) {
    await unlink(tempPath);
    const file = new StagedFile({ name: storedName(part.filename), originalName: part.filename, tempPath: '', size, contentType: '', tooLarge: true });
    file.state = 'discarded';
    return file;
  }
  const detected = await detectFileType(tempPath, Buffer.concat(head), part.filename);
  const name = storedName(part.filename, detected.extension);
  return new StagedFile({ name, originalName: part.filename, tempPath, size, contentType: detected.contentType, tooLarge: false });
}

/** Keys that would reach an object's prototype instead of becoming its own. */
export function isUnsafeKey(key: string): boolean {
  return key in Object.prototype;
}

export interface ReceivedBody {
  /** The record input: form fields, `@jsonPayload` values, and uploads (StagedFile) under their keys. */
  input: Record<string, unknown>;
  /** Every upload of the request, to settle once the write is over. */
  staged: StagedFile[];
}

/** A multipart body as read, before it means anything to a domain. */
export interface MultipartForm {
  /** Form fields by key (a repeated key: each value in order). */
  fields: Map<string, unknown[]>;
  /** `@jsonPayload` parts, parsed (each a JSON object), in order. */
  payloads: Record<string, unknown>[];
  /** Uploads by part key, in order. */
  uploads: Map<string, StagedFile[]>;
  /** Every upload of the request, to settle once the write is over. */
  staged: StagedFile[];
}

/**
 * For a file part's key: the most bytes of it to keep (a file field's `maxSize`; a larger file is
 * read but marked too large), or undefined to read and ignore the part.
 */
export type FileLimit = (key: string) => number | undefined;

/**
 * Reads a multipart body: form fields, `@jsonPayload` parts, and files, streamed to the staging
 * directory within the request's byte budget. On failure every staged file is removed before the
 * error is thrown.
 */
export async function readMultipart(parts: AsyncIterable<UploadPart>, options: ReceiveOptions, fileLimit: FileLimit, declaredLength?: number): Promise<MultipartForm> {
  if (declaredLength !== undefined && declaredLength > options.requestLimit) throw uploadTooLarge(options.requestLimit);
  const budget = new ByteBudget(options.requestLimit);
  const form: MultipartForm = { fields: new Map(), payloads: [], uploads: new Map(), staged: [] };
  try {
    for await (const part of readParts(parts)) {
      if (isUnsafeKey(part.fieldname)) throw badRequest(`Invalid form field name ${JSON.stringify(part.fieldname)}.`);
      if (part.type === 'field') {
        // A part sent as application/json arrives parsed (typed); plain form values are text.
        const text = typeof part.value === 'string' ? part.value : JSON.stringify(part.value ?? null);
        budget.spend(Buffer.byteLength(text));
        if (part.valueTruncated) throw new ApiError(413, `The form field "${part.fieldname}" is too large.`, {}, { connection: 'close' });
        if (part.fieldname === JSON_PAYLOAD) form.payloads.push(parsePayload(part.value));
        else form.fields.set(part.fieldname, [...(form.fields.get(part.fieldname) ?? []), part.value]);
        continue;
      }
      const maxSize = fileLimit(part.fieldname);
      if (maxSize === undefined) {
        // Not a file this request takes (still counted against its budget).
        await drain(part.file, budget);
        continue;
      }
      const file = await stage(part, maxSize, options, budget);
      form.staged.push(file);
      form.uploads.set(part.fieldname, [...(form.uploads.get(part.fieldname) ?? []), file]);
    }
  } catch (err) {
    await discardStaged(form.staged);
    throw err;
  }
  return form;
}

/** Adds uploads to a record input: after the names the input keeps under the same key. */
export function withUploads(input: Record<string, unknown>, uploads: Map<string, StagedFile[]>): Record<string, unknown> {
  for (const [key, files] of uploads) {
    if (isUnsafeKey(key)) continue;
    const current = input[key];
    const kept = current === undefined || current === '' ? [] : Array.isArray(current) ? current : [current];
    input[key] = [...kept, ...files];
  }
  return input;
}

/**
 * Reads a multipart record body as PocketBase's SDKs send it: form fields (a repeated key becomes a
 * list), `@jsonPayload` parts whose JSON values override them, and files for the collection's file
 * fields. As in PocketBase, files under other keys are ignored.
 */
export async function receiveBody(parts: AsyncIterable<UploadPart>, collection: Collection, options: ReceiveOptions, declaredLength?: number): Promise<ReceivedBody> {
  const form = await readMultipart(parts, options, (key) => {
    const field = fileFieldOf(collection, key);
    return field && fileOptions(field).maxSize;
  }, declaredLength);
  const input: Record<string, unknown> = {};
  for (const [key, values] of form.fields) input[key] = values.length === 1 ? values[0] : values;
  for (const payload of form.payloads) {
    for (const [key, value] of Object.entries(payload)) if (!isUnsafeKey(key)) input[key] = value;
  }
  return { input: withUploads(input, form.uploads), staged: form.staged };
}

function parsePayload(raw: unknown): Record<string, unknown> {
  let value = raw;
  if (typeof raw === 'string') {
    if (jsonTooDeep(raw)) throw badRequest(`Failed to load the submitted data: "${JSON_PAYLOAD}" is nested deeper than ${MAX_JSON_DEPTH} levels.`);
    try {
      value = JSON.parse(raw);
    } catch {
      throw badRequest(`Failed to load the submitted data: "${JSON_PAYLOAD}" is not valid JSON.`);
    }
  }
  if (!isPlainObject(value)) throw badRequest(`Failed to load the submitted data: "${JSON_PAYLOAD}" must be a JSON object.`);
  return value;
}

/** Removes staged copies that never reached storage. */
export async function discardStaged(staged: StagedFile[]): Promise<void> {
  for (const file of staged) {
    if (file.state !== 'staged') continue;
    if (file.tempPath !== '') await unlink(file.tempPath).catch(() => {});
    file.state = 'discarded';
  }
}
