import type { Row } from '../storage/index.ts';
import { pbDate } from '../lib/time.ts';
import type { OutputKey, RecordShape } from './shape.ts';

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

/** Sets one key of a record's JSON, or leaves it out (a hidden field, an email the viewer may not see). */
type Slot = (out: RecordJson, row: Row, viewer: Viewer) => void;

const slotsOf = new WeakMap<RecordShape, Slot[]>();

const emptyColumn = (v: unknown) => v === '' || v === null || v === undefined;

function slot(shape: RecordShape, key: OutputKey): Slot | undefined {
  const c = shape.collection;
  const f = key.field;
  if (f) {
    const { name, type, field, date } = f;
    const set: Slot = date ? (out, row) => (out[name] = pbDate(type.fromDb(row[name], field))) : (out, row) => (out[name] = type.fromDb(row[name], field));
    return field.hidden ? (out, row, viewer) => viewer.privileged && set(out, row, viewer) : set;
  }
  switch (key.key) {
    case 'id':
      return (out, row) => (out.id = row.id as string);
    case 'collectionId':
      return (out) => (out.collectionId = c.id);
    case 'collectionName':
      return (out) => (out.collectionName = c.name);
    case 'created':
    case 'updated': {
      const name = key.key;
      // As PocketBase: a view record has `created` and `updated` only when its query selects them.
      return c.type === 'view' ? (out, row) => !emptyColumn(row[name]) && (out[name] = pbDate(row[name])) : (out, row) => (out[name] = pbDate(row[name]));
    }
    case 'email':
      return (out, row, viewer) => {
        const visible = row.emailVisibility === 1 || row.emailVisibility === true;
        const own = viewer.authRecordId === row.id && viewer.authCollectionId === c.id;
        if (visible || own || viewer.privileged || viewer.managed?.has(row.id as string) === true) out.email = row.email ?? '';
      };
    case 'emailVisibility':
      return (out, row) => (out.emailVisibility = row.emailVisibility === 1 || row.emailVisibility === true);
    case 'verified':
      return (out, row) => (out.verified = row.verified === 1 || row.verified === true);
    default:
      // `expand` is placed by `withExpandSlot`, only where an answer expands.
      return undefined;
  }
}

function slots(shape: RecordShape): Slot[] {
  let made = slotsOf.get(shape);
  if (!made) slotsOf.set(shape, (made = shape.order.flatMap((key) => slot(shape, key) ?? [])));
  return made;
}

/**
 * Turns a stored row into the record JSON of the API (API contract §4, §23): keys in the order the
 * collection's shape compiled (PocketBase's), dates as PocketBase writes them.
 */
export function serializeRecord(row: Row, shape: RecordShape, viewer: Viewer): RecordJson {
  const out = {} as RecordJson;
  for (const set of slots(shape)) set(out, row, viewer);
  return out;
}

/**
 * The same record with an `expand` key reserved at its place in the order (undefined, which JSON
 * leaves out until the expand sets it): a record's keys keep the order they were added in, and
 * `expand` sorts among the fields, not after them. Only answers that expand pay for the copy.
 */
export function withExpandSlot(record: RecordJson, shape: RecordShape): RecordJson {
  if ('expand' in record) return record;
  const out = {} as RecordJson;
  for (const { key } of shape.order) {
    if (key === 'expand') out.expand = undefined;
    else if (key in record) out[key] = record[key];
  }
  // Keys the shape does not know (set by code after serializing) stay, after the others.
  for (const key in record) if (!(key in out)) out[key] = record[key];
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
