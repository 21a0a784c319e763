import type { Row } from '../storage/index.ts';
import type { RecordShape } from './shape.ts';

export type RecordJson = Record<string, unknown> & { id: string; expand?: Record<string, unknown> };

export interface Viewer {
  /** Administrators see hidden fields and every email. */
  privileged: boolean;
  /** Id of the auth record making the request, if any: it sees its own email. */
  authRecordId?: string;
  /** Collection of that auth record. */
  authCollectionId?: string;
  /** Ids of auth records the caller manages (their collection's `manageRule`): it sees their email. */
  managed?: ReadonlySet<string>;
}

/** Whether `serializeRecord` gives this viewer what it gives an administrator. */
export function seesAsAdministrator(shape: RecordShape, viewer: Viewer): boolean {
  return viewer.privileged || shape.sameForEveryone;
}

/** Turns a stored row into the record JSON of the API (API contract §4). */
export function serializeRecord(row: Row, shape: RecordShape, viewer: Viewer): RecordJson {
  const c = shape.collection;
  const out: RecordJson = {
    id: row.id as string,
    collectionId: c.id,
    collectionName: c.name,
    created: row.created,
    updated: row.updated,
  };
  // As PocketBase: a view record has `created` and `updated` only when its query selects them.
  if (c.type === 'view') {
    if (row.created === '' || row.created === null || row.created === undefined) delete out.created;
    if (row.updated === '' || row.updated === null || row.updated === undefined) delete out.updated;
  }
  if (c.type === 'auth') {
    const visible = row.emailVisibility === 1 || row.emailVisibility === true;
    const own = viewer.authRecordId === row.id && viewer.authCollectionId === c.id;
    if (visible || own || viewer.privileged || viewer.managed?.has(row.id as string) === true) out.email = row.email ?? '';
    out.emailVisibility = visible;
    out.verified = row.verified === 1 || row.verified === true;
  }
  for (const f of shape.fields) {
    if (f.field.hidden && !viewer.privileged) continue;
    out[f.name] = f.type.fromDb(row[f.name], f.field);
  }
  return out;
}

// JSON texts already made for records about to be answered (see `withJson`).
const made = new WeakMap<object, string>();

/**
 * Notes that `json` is `JSON.stringify(record)`, so the answer need not make it again: a webhook
 * trigger makes the record's JSON for its event, and the caller usually gets the same record back.
 * Only the records routes look it up, right after the write returns (nothing changes the record in
 * between); other callers of the records domain just get the object.
 */
export function withJson<T extends object>(record: T, json: string): T {
  made.set(record, json);
  return record;
}

/** The JSON text `withJson` noted for a value, if any. */
export function madeJson(value: unknown): string | undefined {
  return typeof value === 'object' && value !== null ? made.get(value) : undefined;
}

/**
 * JSON text made for an answer, sent as it is by the HTTP layer (records rendered straight from rows,
 * src/records/render.ts). Anything that serializes it anyway gets the same JSON.
 */
export class JsonText {
  constructor(readonly text: string) {}

  toJSON(): unknown {
    return JSON.parse(this.text);
  }
}
