import { badRequest } from '../errors.ts';
import type { StagedFile } from '../files/staged.ts';
import { isUnsafeKey } from '../files/uploads.ts';
import { batchFailed, invalidBatch } from './failure.ts';
import { isPlainObject } from '../lib/objects.ts';

export type BatchAction = 'create' | 'update' | 'delete' | 'upsert';

/** One request of a batch, checked: a record write on a records path of the batch's database. */
export interface BatchRequest {
  action: BatchAction;
  /** As sent, upper-cased (what rules see as `@request.method`). */
  method: string;
  /** The collection, by name or id, as the path names it. */
  collection: string;
  /** The record, for update and delete. */
  id?: string;
  /** The query string (`expand`, `fields`; rules may read any key as `@request.query.*`). */
  query: Record<string, unknown>;
  /** Headers for this request's rules (`@request.headers.*`), names lower-cased. */
  headers: Record<string, string>;
  /** The record input as JSON values. */
  body: Record<string, unknown>;
  /** Files of a multipart batch for this request, by key (`avatar`, `documents+`, …). */
  uploads?: Map<string, StagedFile[]>;
}

/** The writes a batch may hold, as PocketBase v0.23 allows them: method and whether the path names a record. */
const ACTIONS: Record<string, { action: BatchAction; withId: boolean }> = {
  POST: { action: 'create', withId: false },
  PUT: { action: 'upsert', withId: false },
  PATCH: { action: 'update', withId: true },
  DELETE: { action: 'delete', withId: true },
};
const RECORDS_PATH = /^\/api\/collections\/([^/]+)\/records(?:\/([^/]+))?$/;
const MAX_URL = 8192;
/** Headers that stay the batch request's own: the caller and the database are the batch's. */
const BATCH_HEADERS = new Set(['authorization', 'x-dbname']);
const ALLOWED = 'only record writes are allowed in a batch: POST and PUT (upsert) on /api/collections/:collection/records, PATCH and DELETE on /api/collections/:collection/records/:id';

function invalid(field: string, message: string): never {
  throw badRequest(message, { [field]: { code: 'validation_invalid_value', message } });
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return invalid('url', `The url has an invalid percent-encoding in ${JSON.stringify(segment.slice(0, 100))}.`);
  }
}

function queryOf(text: string): Record<string, unknown> {
  const query: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (isUnsafeKey(key)) continue;
    const current = query[key];
    query[key] = current === undefined ? value : Array.isArray(current) ? [...current, value] : [current, value];
  }
  return query;
}

function headersOf(value: unknown): Record<string, string> {
  if (value === undefined || value === null) return {};
  if (!isPlainObject(value)) invalid('headers', 'The headers must be an object of strings.');
  const out: Record<string, string> = {};
  for (const [name, v] of Object.entries(value)) {
    if (typeof v !== 'string') invalid('headers', `The header ${JSON.stringify(name.slice(0, 100))} must be a string.`);
    const key = name.toLowerCase();
    if (!BATCH_HEADERS.has(key) && !isUnsafeKey(key)) out[key] = v;
  }
  return out;
}

/** One entry of `requests`: `{method, url, headers?, body?}`. */
function parseRequest(item: unknown): BatchRequest {
  if (!isPlainObject(item)) invalid('request', 'Each request must be an object {method, url, headers?, body?}.');
  if (typeof item.method !== 'string' || item.method === '') invalid('method', 'The method must be a string such as "POST".');
  if (typeof item.url !== 'string' || item.url === '') invalid('url', 'The url must be a string such as "/api/collections/posts/records".');
  if (item.url.length > MAX_URL) invalid('url', `The url must be at most ${MAX_URL} characters.`);
  const method = item.method.toUpperCase();
  // Matched on the path as sent, never resolved ("..", "//host"): only these paths name a write.
  const q = item.url.indexOf('?');
  const path = q < 0 ? item.url : item.url.slice(0, q);
  const route = ACTIONS[method];
  const m = RECORDS_PATH.exec(path);
  if (!route || !m || route.withId !== (m[2] !== undefined)) {
    throw badRequest(`${method.slice(0, 10)} ${path.slice(0, 200)}: ${ALLOWED}.`, { url: { code: 'validation_invalid_batch_request', message: ALLOWED } });
  }
  let body: Record<string, unknown> = {};
  if (item.body !== undefined && item.body !== null) {
    if (!isPlainObject(item.body)) invalid('body', 'The body must be a JSON object.');
    body = item.body;
  }
  return {
    action: route.action,
    method,
    collection: decodeSegment(m[1]),
    id: m[2] === undefined ? undefined : decodeSegment(m[2]),
    query: q < 0 ? {} : queryOf(item.url.slice(q + 1)),
    headers: headersOf(item.headers),
    body,
  };
}

/**
 * Reads a batch document `{requests: [...]}` (API contract §11). A document that is not one is a 400;
 * a request that is not a record write of the allowed set is a 400 naming its index.
 */
export function parseBatch(doc: unknown, maxRequests: number): BatchRequest[] {
  if (!isPlainObject(doc)) throw invalidBatch('The batch must be a JSON object {"requests": [...]}.');
  const list = doc.requests;
  if (!Array.isArray(list)) throw invalidBatch('"requests" must be a list of {method, url, headers?, body?}.');
  if (list.length === 0) throw invalidBatch('The batch holds no requests.', 'validation_required');
  if (list.length > maxRequests) {
    throw invalidBatch(`A batch may hold at most ${maxRequests} requests; this one has ${list.length}.`, 'validation_too_many_requests');
  }
  return list.map((item, i) => {
    try {
      return parseRequest(item);
    } catch (err) {
      throw batchFailed(i, err);
    }
  });
}
