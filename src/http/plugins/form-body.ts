import { parse as parseQuery } from 'node:querystring';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiError, badRequest } from '../../errors.ts';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../../lib/json-depth.ts';
import { malformedMultipart } from '../../files/uploads.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * true for routes that read a `multipart/form-data` body themselves (`req.parts()`: record uploads,
     * batches with files, migration and backup uploads, hook routes). Every other route gets the form's
     * fields as its body, as it gets a JSON one.
     */
    multipart?: boolean;
  }
}

/** The part of a form whose JSON-encoded values are typed, unlike plain fields (PocketBase's SDKs send it). */
const JSON_PAYLOAD = '@jsonPayload';

/** Keys that would reach an object's prototype: dropped, as the JSON parser refuses them. */
const UNSAFE_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Adds one form value: a key given several times becomes a list, as PocketBase binds repeated keys. */
function addValue(body: Record<string, unknown>, key: string, value: unknown): void {
  if (UNSAFE_KEYS.has(key)) return;
  if (!Object.hasOwn(body, key)) body[key] = value;
  else if (Array.isArray(body[key])) (body[key] as unknown[]).push(value);
  else body[key] = [body[key], value];
}

/** Merges a `@jsonPayload` value over the fields (its keys win, as PocketBase applies it last). */
function mergePayload(body: Record<string, unknown>, text: string): void {
  if (jsonTooDeep(text)) throw badRequest(`Failed to load the submitted data: JSON nested deeper than ${MAX_JSON_DEPTH} levels.`);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw badRequest(`Failed to load the submitted data: "${JSON_PAYLOAD}" is not valid JSON.`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw badRequest(`Failed to load the submitted data: "${JSON_PAYLOAD}" must hold a JSON object.`);
  for (const [key, v] of Object.entries(value)) if (!UNSAFE_KEYS.has(key)) body[key] = v;
}

/** The fields of a urlencoded body as a JSON route reads them (values stay strings, as the form sent them). */
export function formFields(text: string): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const payloads: string[] = [];
  for (const [key, value] of Object.entries(parseQuery(text))) {
    for (const v of [value ?? ''].flat()) {
      if (key === JSON_PAYLOAD) payloads.push(v);
      else addValue(body, key, v);
    }
  }
  for (const p of payloads) mergePayload(body, p);
  return body;
}

/**
 * Reads a multipart body into fields. Files are read and dropped (no JSON route takes one); their bytes
 * count towards the body limit all the same.
 */
async function multipartFields(req: FastifyRequest, limit: number): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  const payloads: string[] = [];
  let size = 0;
  const spend = (n: number) => {
    size += n;
    if (size > limit) throw new ApiError(413, `The request body is larger than the limit of ${limit} bytes.`, {}, { connection: 'close' });
  };
  try {
    for await (const part of req.parts({ limits: { fileSize: limit + 1 } })) {
      if (part.type === 'file') {
        for await (const chunk of part.file) spend((chunk as Buffer).length);
        continue;
      }
      const value = typeof part.value === 'string' ? part.value : String(part.value ?? '');
      spend(value.length + part.fieldname.length);
      if (part.fieldname === JSON_PAYLOAD) payloads.push(value);
      else addValue(body, part.fieldname, value);
    }
  } catch (err) {
    throw malformedMultipart(err);
  }
  for (const p of payloads) mergePayload(body, p);
  return body;
}

/**
 * PocketBase binds a request body from JSON, `multipart/form-data` or `application/x-www-form-urlencoded`
 * alike, so clients sign in (and call everything else) with forms. Here once for every route: a urlencoded
 * body is parsed into fields, and a multipart one is read into fields before the handler runs unless
 * the route reads its parts itself (`config.multipart`). `@jsonPayload` holds typed values in either.
 */
export function registerFormBody(app: FastifyInstance, options: { bodyLimit: number }): void {
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, text, done) => {
    try {
      done(null, formFields(text as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  app.addHook('preValidation', async (req) => {
    if (req.routeOptions.config?.multipart || !req.isMultipart()) return;
    req.body = await multipartFields(req, options.bodyLimit);
  });
}
