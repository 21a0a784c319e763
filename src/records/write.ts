import { relationTarget } from '../collections/fields/relation.ts';
import type { Collection } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import { isSystem, type RequestContext } from '../context.ts';
import { badRequest, type FieldError, validationFailed } from '../errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { type Database, list, raw, type Row, sql, type Transaction } from '../storage/index.ts';
import type { AuthPrepared } from './auth-fields.ts';
import type { AroundWrite, RecordDeps, RecordEvent } from './deps.ts';
import { Draft } from './draft.ts';
import { markWorkError } from '../lib/chain.ts';
import { param } from './query-params.ts';
import { finishRecords, type OutputOptions } from './read.ts';
import { type RecordJson, seesAsAdministrator, serializeRecord, withJson } from './serialize.ts';
import { type RecordShape, shapeOf } from './shape.ts';
import { prepareValues } from './validate.ts';
import { viewerFor, viewerOf } from './viewer.ts';

/**
 * One record write, split at the transaction so that a caller can run several in one (a batch):
 * `prepare…` does beforehand what needs no transaction (input and rule checks that need no row,
 * password hashing: slow work that must not hold the writer), `apply` writes inside a transaction
 * the caller owns, and `answer` makes the record the caller gets back once that transaction
 * committed. A single write is `commitWrite`: its own transaction, then its answer.
 *
 * Every record write of Cairn passes through an `apply` (the records API, each request of a batch,
 * the auth flows, workflows, and hooks' own writes), which is where application hooks wrap it
 * (`hooked`): their chain runs inside the transaction and its last `next()` is the write itself.
 */
export interface RecordWrite {
  readonly action: RecordEvent['action'];
  /**
   * Inside the caller's transaction: the checks that need stored rows (relations, the record's
   * current state, the create rule against the new row), the change, its files and the change hooks,
   * whose follow-ups (`afterCommit`) run in the order the writes were applied. Runs once. On failure
   * the caller must roll the transaction back (PostgreSQL refuses further statements in it anyway).
   */
  apply(tx: Transaction): Promise<void>;
  /** After commit: the record as the caller sees it (`expand`, `fields`); undefined for a delete. */
  answer(): Promise<unknown>;
}

/** Runs one prepared write in a transaction of its own and answers. */
export async function commitWrite(db: Database, write: RecordWrite): Promise<unknown> {
  await db.transaction((tx) => write.apply(tx));
  return write.answer();
}

/** What every phase of one write needs, loaded once when it is prepared. */
export interface WriteScope {
  deps: RecordDeps;
  ctx: RequestContext;
  collection: Collection;
  collections: CollectionSet;
  shape: RecordShape;
  privileged: boolean;
}

export function refuseViews(collection: Collection): void {
  if (collection.type === 'view') throw badRequest(`"${collection.name}" is a view: its records are read-only.`);
}

export async function writeScope(deps: RecordDeps, ctx: RequestContext, collection: Collection): Promise<WriteScope> {
  refuseViews(collection);
  return { deps, ctx, collection, collections: await deps.collections.all(ctx.db), shape: shapeOf(collection), privileged: deps.access.privileged(ctx) };
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A write's input, which must be an object. */
export function objectInput(input: unknown): Record<string, unknown> {
  if (!isPlainObject(input)) throw badRequest('The request body must be a JSON object.');
  return input;
}

/** Turns a unique-constraint failure into the 400 PocketBase gives, naming the field. */
export function uniqueViolation(err: unknown, collection: Collection, dialect: Transaction['dialect']): unknown {
  const kind = dialect.classifyError(err);
  if (kind.kind !== 'unique') return err;
  const data: Record<string, FieldError> = {};
  for (const column of kind.columns.length > 0 ? kind.columns : ['id']) {
    data[column] = { code: 'validation_not_unique', message: 'Value must be unique.' };
  }
  return validationFailed(data, `Failed to save the record: a value of ${Object.keys(data).map((c) => `"${c}"`).join(', ')} is already used in "${collection.name}".`);
}

/** Checks that every related id exists; inside the write's transaction so the check holds at commit. */
export async function checkRelations(tx: Transaction, collections: CollectionSet, shape: RecordShape, values: Map<string, unknown>, errors: Record<string, FieldError>): Promise<void> {
  for (const f of shape.fields) {
    if (f.field.type !== 'relation' || !values.has(f.name)) continue;
    const value = values.get(f.name);
    const ids = Array.isArray(value) ? (value as string[]) : value ? [value as string] : [];
    if (ids.length === 0) continue;
    const target = collections.find(relationTarget(f.field));
    if (!target) {
      errors[f.name] = { code: 'validation_missing_rel_collection', message: 'The related collection no longer exists.' };
      continue;
    }
    const q = sql`SELECT COUNT(*) AS n FROM ${raw(quoteIdent(target.name))} WHERE id IN (${list(ids)})`;
    const found = await tx.get<{ n: number }>(q.text, q.params);
    if (Number(found?.n ?? 0) !== ids.length) {
      errors[f.name] = { code: 'validation_missing_rel_records', message: 'Failed to find all relation records with the provided ids.' };
    }
  }
}

export function columnValues(shape: RecordShape, values: Map<string, unknown>, auth: AuthPrepared | undefined): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [name, value] of auth?.columns ?? []) out.set(name, value);
  for (const f of shape.fields) if (values.has(f.name)) out.set(f.name, f.type.toDb(values.get(f.name), f.field));
  return out;
}

/**
 * The values a write stores once its hooks changed some fields (`changes`, by key): those fields
 * prepared again, as an administrator's (hook code is trusted, and may set hidden and admin-only
 * fields), over what the request prepared, their errors replacing the request's. `existing` is the
 * stored record's values on update, undefined on create. The one place hook changes become values,
 * for creates and updates alike.
 */
export function withHookChanges(
  s: Pick<WriteScope, 'collection' | 'shape'>,
  changes: ReadonlyMap<string, unknown>,
  values: Map<string, unknown>,
  errors: Record<string, FieldError>,
  existing: Record<string, unknown> | undefined,
): { values: Map<string, unknown>; errors: Record<string, FieldError> } {
  const touched: Record<string, unknown> = {};
  for (const f of s.shape.fields) if (changes.has(f.name)) touched[f.name] = changes.get(f.name);
  const names = Object.keys(touched);
  if (names.length === 0) return { values, errors: { ...errors } };
  const out = new Map(values);
  const left = { ...errors };
  for (const name of names) {
    out.delete(name);
    delete left[name];
  }
  // `existing` given (`{}` on create): only the touched fields are prepared.
  const again = prepareValues(s.collection, s.shape, touched, existing ?? {}, true);
  for (const [name, value] of again.values) out.set(name, value);
  Object.assign(left, again.errors);
  return { values: out, errors: left };
}

/** Values of a stored row in canonical form, as field types prepare them. */
export function canonical(shape: RecordShape, row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of shape.fields) out[f.name] = f.type.fromDb(row[f.name], f.field);
  return out;
}

/** A record change as the change hooks get it. */
export class Change implements RecordEvent {
  private json?: string;
  readonly database: string;

  constructor(
    readonly action: RecordEvent['action'],
    readonly ctx: RequestContext,
    readonly collection: Collection,
    readonly record: RecordJson,
    readonly oldRecord?: RecordJson,
  ) {
    this.database = ctx.dbName;
  }

  recordJson(): string {
    return (this.json ??= JSON.stringify(this.record));
  }

  /** The record's JSON, if a hook made it. */
  get madeJson(): string | undefined {
    return this.json;
  }
}

export async function emit(deps: RecordDeps, tx: Transaction, event: RecordEvent): Promise<void> {
  for (const hook of deps.changeHooks) await hook(tx, event);
}

const NO_CHANGES: ReadonlyMap<string, unknown> = new Map();

/**
 * Runs `write` as the last link of `around` (the application hooks bound to this write): they see the
 * record `makeRecord` makes (the values to write) on first use, and the stored record after their
 * `next()`. `write` gets the keys they changed (none when no handler looked at the record) and the
 * record as they left it, and returns the stored record.
 */
export async function runHooked(
  around: AroundWrite,
  s: Pick<WriteScope, 'ctx' | 'collection'>,
  tx: Transaction,
  makeRecord: () => Record<string, unknown>,
  original: (() => RecordJson) | undefined,
  write: (changes: ReadonlyMap<string, unknown>, record: Record<string, unknown> | undefined) => Promise<RecordJson>,
): Promise<void> {
  let draft: Draft | undefined;
  let stored: RecordJson | undefined;
  const record = {
    get: (): Record<string, unknown> => (draft ? draft.record : stored ?? (draft = new Draft(makeRecord())).record),
    set: (value: Record<string, unknown>): void => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError('e.record must be an object');
      (draft ??= new Draft(makeRecord())).record = value;
    },
  };
  await around({ ctx: s.ctx, tx, collection: s.collection, record, original }, async () => {
    try {
      const result = await write(draft ? draft.changes() : NO_CHANGES, draft?.record);
      if (draft) draft.settle(result);
      else stored = result;
    } catch (err) {
      // The write's own failure (a validation error, a database fault) is not the hooks'.
      markWorkError(err);
      throw err;
    }
  });
}

/**
 * The record a create or update answers with. A caller who sees the record as an administrator does
 * (no hidden fields, no email to hide), asking for nothing to expand or pick, gets the change's record
 * itself, with the JSON a hook already made for it, unless enrich hooks are to see it.
 */
export async function answer(deps: RecordDeps, ctx: RequestContext, shape: RecordShape, row: Row, change: Change, options: OutputOptions): Promise<unknown> {
  const c = shape.collection;
  const viewer = c.type === 'auth' && deps.access.mayManage(ctx, c) ? await viewerFor(ctx, deps, c, await deps.collections.all(ctx.db), [row.id as string]) : viewerOf(ctx, deps);
  const enriched = !isSystem(ctx) && deps.events?.enriches(shape.collection) === true;
  if (!enriched && seesAsAdministrator(shape, viewer) && param(options.expand) === '' && param(options.fields) === '') {
    const json = change.madeJson;
    return json === undefined ? change.record : withJson(change.record, json);
  }
  const [out] = await finishRecords(deps, ctx, shape.collection, [serializeRecord(row, shape, viewer)], options);
  return out;
}
