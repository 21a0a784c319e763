import type { Auth, RecordAuth } from '../context.ts';
import type { Row } from '../storage/index.ts';
import type { RecordShape } from './shape.ts';

/**
 * The row each record caller was authenticated from (its tokenKey included), read once per request by
 * the token check, and the shape it was read with. A refresh signs from it and a view of the caller's
 * own account answers from it, as PocketBase uses the request's auth record, instead of reading the
 * same row again. Keyed by the caller object: a caller made elsewhere has none and is read.
 */
const rows = new WeakMap<RecordAuth, { shape: RecordShape; row: Row }>();

export function keepCallerRow(auth: RecordAuth, shape: RecordShape, row: Row): void {
  rows.set(auth, { shape, row });
}

export function callerRow(auth: RecordAuth): Row | undefined {
  return rows.get(auth)?.row;
}

/**
 * The caller's own row when `id` of the collection `shape` describes is the caller's account, read with
 * that same shape (a collection changed since has a new one, and is read again).
 */
export function ownRow(auth: Auth, shape: RecordShape, id: string): Row | undefined {
  if (auth.type !== 'record' || auth.id !== id) return undefined;
  const kept = rows.get(auth);
  return kept?.shape === shape ? kept.row : undefined;
}
