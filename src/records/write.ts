import { relationTarget } from '../collections/fields/relation.ts';
import { typeOf } from '../collections/fields/registry.ts';
import type { Collection } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import type { RequestContext } from '../context.ts';
import { badRequest, type FieldError, notFound, validationFailed } from '../errors.ts';
import { isRecordId, newRecordId } from '../lib/ids.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { nowIso } from '../lib/time.ts';
import { type Database, list, type Queryable, raw, type Row, type Sql, sql, type Transaction } from '../storage/index.ts';
import { type AuthPrepared, prepareAuthCreate, prepareAuthUpdate } from './auth-fields.ts';
import type { RecordDeps, RecordEvent } from './deps.ts';
import { param } from './query-params.ts';
import { checkOutputOptions, finishRecords, type OutputOptions, selectById } from './read.ts';
import { type RecordJson, seesAsAdministrator, serializeRecord, withJson } from './serialize.ts';
import { insertSql, ROOT_ALIAS, type RecordShape, shapeOf } from './shape.ts';
import { prepareValues } from './validate.ts';
import { PRIVILEGED_VIEWER, viewerOf } from './viewer.ts';

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function refuseViews(collection: Collection): void {
  if (collection.type === 'view') throw badRequest(`"${collection.name}" is a view: its records are read-only.`);
}

/** Turns a unique-constraint failure into the 400 PocketBase gives, naming the field. */
function uniqueViolation(err: unknown, collection: Collection, dialect: Transaction['dialect']): unknown {
  const kind = dialect.classifyError(err);
  if (kind.kind !== 'unique') return err;
  const data: Record<string, FieldError> = {};
  for (const column of kind.columns.length > 0 ? kind.columns : ['id']) {
    data[column] = { code: 'validation_not_unique', message: 'Value must be unique.' };
  }
  return validationFailed(data, `Failed to save the record: a value of ${Object.keys(data).map((c) => `"${c}"`).join(', ')} is already used in "${collection.name}".`);
}

/** Checks that every related id exists; inside the write's transaction so the check holds at commit. */
async function checkRelations(tx: Transaction, collections: CollectionSet, shape: RecordShape, values: Map<string, unknown>, errors: Record<string, FieldError>): Promise<void> {
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

function columnValues(shape: RecordShape, values: Map<string, unknown>, auth: AuthPrepared | undefined): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [name, value] of auth?.columns ?? []) out.set(name, value);
  for (const f of shape.fields) if (values.has(f.name)) out.set(f.name, f.type.toDb(values.get(f.name), f.field));
  return out;
}

/** A record change as the change hooks get it. */
class Change implements RecordEvent {
  private json?: string;

  constructor(
    readonly action: RecordEvent['action'],
    readonly database: string,
    readonly collection: Collection,
    readonly record: RecordJson,
    readonly oldRecord?: RecordJson,
  ) {}

  recordJson(): string {
    return (this.json ??= JSON.stringify(this.record));
  }

  /** The record's JSON, if a hook made it. */
  get madeJson(): string | undefined {
    return this.json;
  }
}

async function emit(deps: RecordDeps, tx: Transaction, event: RecordEvent): Promise<void> {
  for (const hook of deps.changeHooks) await hook(tx, event);
}

/**
 * The record a create or update answers with. A caller who sees the record as an administrator does
 * (no hidden fields, no email to hide), asking for nothing to expand or pick, gets the change's record
 * itself, with the JSON a hook already made for it.
 */
async function answer(deps: RecordDeps, ctx: RequestContext, shape: RecordShape, row: Row, change: Change, options: OutputOptions): Promise<unknown> {
  const viewer = viewerOf(ctx, deps);
  if (seesAsAdministrator(shape, viewer) && param(options.expand) === '' && param(options.fields) === '') {
    const json = change.madeJson;
    return json === undefined ? change.record : withJson(change.record, json);
  }
  const [out] = await finishRecords(deps, ctx, shape.collection, [serializeRecord(row, shape, viewer)], options);
  return out;
}

/** Values of a stored row in canonical form, as field types prepare them. */
function canonical(shape: RecordShape, row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of shape.fields) out[f.name] = f.type.fromDb(row[f.name], f.field);
  return out;
}

/**
 * One record write, split at the transaction so that a caller can run several in one (a batch):
 * `prepare…` does beforehand what needs no transaction (input and rule checks that need no row,
 * password hashing: slow work that must not hold the writer), `apply` writes inside a transaction
 * the caller owns, and `answer` makes the record the caller gets back once that transaction
 * committed. A single write is `commitWrite`: its own transaction, then its answer.
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

export async function writeScope(deps: RecordDeps, ctx: RequestContext, collection: Collection): Promise<WriteScope> {
  refuseViews(collection);
  return { deps, ctx, collection, collections: await deps.collections.all(ctx.db), shape: shapeOf(collection), privileged: deps.access.privileged(ctx) };
}

/** A write's input, which must be an object. */
export function objectInput(input: unknown): Record<string, unknown> {
  if (!isPlainObject(input)) throw badRequest('The request body must be a JSON object.');
  return input;
}

export async function prepareCreate(deps: RecordDeps, ctx: RequestContext, collection: Collection, input: unknown, options: OutputOptions = {}): Promise<RecordWrite> {
  refuseViews(collection);
  const body = objectInput(input);
  return planCreate(await writeScope(deps, ctx, collection), body, options);
}

const declaredTypesOf = new WeakMap<RecordShape, Promise<Map<string, string> | undefined>>();

/**
 * The declared types of a collection's columns where the dialect can tell what an insert keeps
 * (`Dialect.insertKeeps`), loaded once per collection version; undefined where it cannot, and for
 * auth collections, whose records show columns no field stands for.
 */
function declaredTypes(db: Queryable, shape: RecordShape): Promise<Map<string, string> | undefined> {
  let types = declaredTypesOf.get(shape);
  if (types === undefined) {
    types = (async () => {
      if (db.dialect.insertKeeps === undefined || shape.collection.type !== 'base') return undefined;
      const columns = await db.dialect.tableColumns(db, shape.collection.name);
      if (columns.length === 0) {
        // A table this connection cannot see yet (made by a transaction not yet committed): the
        // insert reads its row back, and the next create asks again.
        declaredTypesOf.delete(shape);
        return undefined;
      }
      return new Map(columns.map((c) => [c.name, c.type]));
    })();
    declaredTypesOf.set(shape, types);
    // A failed read is not remembered: the next create asks again.
    types.catch(() => declaredTypesOf.delete(shape));
  }
  return types;
}

/** The row an INSERT of `params` into `names` made, when every value reads back as bound. */
function rowOf(names: readonly string[], params: readonly unknown[]): Row {
  const row: Row = {};
  for (let i = 0; i < names.length; i++) row[names[i]] = params[i];
  return row;
}

/** `prepareCreate` with its scope loaded (upsert decides between create and update with one scope). */
export async function planCreate(s: WriteScope, input: Record<string, unknown>, options: OutputOptions): Promise<RecordWrite> {
  const { deps, ctx, collection, shape } = s;
  // Checked first: a closed collection answers 403 whatever the body.
  const createRule = deps.access.condition(ctx, collection, 'create', s.collections);
  checkOutputOptions(s.collections, collection, options);
  const { values, errors } = prepareValues(collection, shape, input, undefined, s.privileged);
  let id = newRecordId();
  if (input.id !== undefined && input.id !== '') {
    if (isRecordId(input.id)) id = input.id;
    else errors.id = { code: 'validation_invalid_id', message: 'Must be 15 lower-case letters and digits.' };
  }
  // Hashing is slow, so it happens before the transaction takes the write lock.
  const auth = collection.type === 'auth' ? await prepareAuthCreate(input, s.privileged, deps.minPasswordLength) : undefined;
  Object.assign(errors, auth?.errors);
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to create record.');
  await deps.files?.upload?.(ctx.dbName, collection, id, input);

  const columns = columnValues(shape, values, auth);
  const names = ['id', 'created', 'updated', ...columns.keys()];
  const declared = await declaredTypes(ctx.db, shape);

  let row: Row | undefined;
  let change: Change | undefined;
  return {
    action: 'create',
    async apply(tx) {
      try {
        if (shape.hasRelations) {
          const relationErrors: Record<string, FieldError> = {};
          await checkRelations(tx, s.collections, shape, values, relationErrors);
          if (Object.keys(relationErrors).length > 0) throw validationFailed(relationErrors, 'Failed to create record.');
        }
        const now = nowIso();
        const params = [id, now, now, ...columns.values()];
        let inserted: Row;
        if (declared !== undefined && names.length === 3 + shape.fields.length && names.every((name, i) => tx.dialect.insertKeeps!(declared.get(name) ?? '', params[i]))) {
          await tx.run(insertSql(shape, names, false), params);
          inserted = rowOf(names, params);
        } else {
          inserted = (await tx.get<Row>(insertSql(shape, names, true), params))!;
        }
        if (shape.hasFiles) await deps.files?.store(tx, ctx.dbName, collection, id, values);
        // As in PocketBase, the create rule is checked against the new record, before commit.
        if (createRule && !(await selectById(tx, shape, id, createRule))) {
          throw badRequest('Failed to create record: the collection rule does not allow it.');
        }
        change = new Change('create', ctx.dbName, collection, serializeRecord(inserted, shape, PRIVILEGED_VIEWER));
        await emit(deps, tx, change);
        row = inserted;
      } catch (err) {
        throw uniqueViolation(err, collection, tx.dialect);
      }
    },
    answer: () => answer(deps, ctx, shape, row!, change!, options),
  };
}

/** The auth columns an update's checks depend on (`prepareAuthUpdate`). */
interface AuthState {
  email: string;
  verified: boolean;
  passwordHash: string;
}

async function authState(q: Pick<Queryable, 'get'>, shape: RecordShape, id: string, access: Sql | null): Promise<AuthState | undefined> {
  const query = sql`SELECT email, verified, passwordHash FROM ${raw(shape.table)} ${raw(ROOT_ALIAS)} WHERE ${raw(ROOT_ALIAS)}.id = ${id}${access ? sql` AND (${access})` : sql``}`;
  const row = await q.get<{ email: string; verified: unknown; passwordHash: string }>(query.text, query.params);
  return row && { email: row.email, verified: row.verified === 1 || row.verified === true, passwordHash: row.passwordHash };
}

function sameAuthState(a: AuthState, b: AuthState): boolean {
  return a.email === b.email && a.verified === b.verified && a.passwordHash === b.passwordHash;
}

export async function prepareUpdate(
  deps: RecordDeps,
  ctx: RequestContext,
  collection: Collection,
  id: string,
  input: unknown,
  options: OutputOptions = {},
): Promise<RecordWrite> {
  refuseViews(collection);
  const body = objectInput(input);
  return planUpdate(await writeScope(deps, ctx, collection), id, body, options, ctx.db);
}

/**
 * `prepareUpdate` with its scope loaded; `reader` reads the auth state the password checks need
 * (the database before a transaction, the transaction itself when planned inside one).
 */
export async function planUpdate(s: WriteScope, id: string, input: Record<string, unknown>, options: OutputOptions, reader: Pick<Queryable, 'get'>): Promise<RecordWrite> {
  const { deps, ctx, collection, shape } = s;
  const access = deps.access.condition(ctx, collection, 'update', s.collections);
  checkOutputOptions(s.collections, collection, options);

  // Verifying the old password and hashing the new one are slow: done before the transaction,
  // against the state read now. A record not found here is a 404 in `apply`, unless an earlier write
  // of the same transaction creates it.
  let auth: { state: AuthState; prepared: AuthPrepared } | undefined;
  if (collection.type === 'auth') {
    const state = await authState(reader, shape, id, access);
    if (state) auth = { state, prepared: await prepareAuthUpdate(input, state, s.privileged, deps.minPasswordLength) };
  }
  // Before the record is read and checked (inside the transaction): a refused update's uploads are
  // removed when its request settles.
  await deps.files?.upload?.(ctx.dbName, collection, id, input);

  let row: Row | undefined;
  let change: Change | undefined;
  return {
    action: 'update',
    async apply(tx) {
      try {
        const before = await selectById(tx, shape, id, access);
        if (!before) throw notFound();
        let authPrepared: AuthPrepared | undefined;
        if (collection.type === 'auth') {
          // Prepared against a state that changed since (a concurrent password change, or an earlier
          // write of the same batch), or not prepared at all: prepared against the current one. Only
          // such a write pays for hashing inside the transaction.
          const state = (await authState(tx, shape, id, null))!;
          authPrepared = auth && sameAuthState(auth.state, state) ? auth.prepared : await prepareAuthUpdate(input, state, s.privileged, deps.minPasswordLength);
        }
        const { values, errors } = prepareValues(collection, shape, input, canonical(shape, before), s.privileged);
        Object.assign(errors, authPrepared?.errors);
        await checkRelations(tx, s.collections, shape, values, errors);
        if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to update record.');
        const columns = columnValues(shape, values, authPrepared);
        columns.set('updated', nowIso());
        const sets = [...columns.keys()].map((c) => `${quoteIdent(c)} = ?`).join(', ');
        const updated = (await tx.get<Row>(`UPDATE ${shape.table} SET ${sets} WHERE id = ? RETURNING ${shape.returningList}`, [...columns.values(), id]))!;
        await deps.files?.store(tx, ctx.dbName, collection, id, values, canonical(shape, before));
        change = new Change('update', ctx.dbName, collection, serializeRecord(updated, shape, PRIVILEGED_VIEWER), serializeRecord(before, shape, PRIVILEGED_VIEWER));
        await emit(deps, tx, change);
        row = updated;
      } catch (err) {
        throw uniqueViolation(err, collection, tx.dialect);
      }
    },
    answer: () => answer(deps, ctx, shape, row!, change!, options),
  };
}

export async function prepareDelete(deps: RecordDeps, ctx: RequestContext, collection: Collection, id: string): Promise<RecordWrite> {
  return planDelete(await writeScope(deps, ctx, collection), id);
}

export async function planDelete(s: WriteScope, id: string): Promise<RecordWrite> {
  const access = s.deps.access.condition(s.ctx, s.collection, 'delete', s.collections);
  return {
    action: 'delete',
    async apply(tx) {
      const row = await selectById(tx, s.shape, id, access);
      if (!row) throw notFound();
      await deleteWithReferences(s.deps, s.ctx.dbName, tx, s.collections, s.collection, row, new Set());
    },
    answer: async () => undefined,
  };
}

/**
 * Deletes a record and settles what points at it, as PocketBase does: records related through a
 * `cascadeDelete` field are deleted too, other references are cleared, and a reference from a
 * required field that would become empty refuses the whole delete.
 */
async function deleteWithReferences(
  deps: RecordDeps,
  database: string,
  tx: Transaction,
  collections: CollectionSet,
  collection: Collection,
  row: Row,
  visited: Set<string>,
): Promise<void> {
  const key = `${collection.id}/${row.id as string}`;
  if (visited.has(key)) return;
  visited.add(key);
  const id = row.id as string;

  for (const source of collections.list) {
    if (source.type === 'view') continue;
    const sourceShape = shapeOf(source);
    for (const field of source.fields) {
      if (field.type !== 'relation' || relationTarget(field).toLowerCase() !== collection.name.toLowerCase()) continue;
      const multiple = typeOf(field).multiple(field);
      const column = `${ROOT_ALIAS}.${quoteIdent(field.name)}`;
      const match = multiple
        ? sql`EXISTS (SELECT 1 FROM ${raw(tx.dialect.jsonEach(column, 'jr'))} WHERE jr.value = ${id})`
        : sql`${raw(column)} = ${id}`;
      const q = sql`SELECT ${raw(sourceShape.selectList)} FROM ${raw(sourceShape.table)} ${raw(ROOT_ALIAS)} WHERE ${match}`;
      const refs = await tx.all<Row>(q.text, q.params);
      for (const ref of refs) {
        if (ref.id === id && source.id === collection.id) continue;
        if (field.options.cascadeDelete === true) {
          await deleteWithReferences(deps, database, tx, collections, source, ref, visited);
          continue;
        }
        const current = typeOf(field).fromDb(ref[field.name], field);
        const next = multiple ? (current as string[]).filter((v) => v !== id) : '';
        if (field.required && (next === '' || (Array.isArray(next) && next.length === 0))) {
          throw badRequest(
            `The record is referenced by the required relation field "${source.name}.${field.name}" of record "${ref.id as string}"; delete or change that record first.`,
          );
        }
        const updated = (await tx.get<Row>(
          `UPDATE ${sourceShape.table} SET ${quoteIdent(field.name)} = ?, updated = ? WHERE id = ? RETURNING ${sourceShape.returningList}`,
          [typeOf(field).toDb(next, field), nowIso(), ref.id],
        ))!;
        await emit(deps, tx, new Change('update', database, source, serializeRecord(updated, sourceShape, PRIVILEGED_VIEWER), serializeRecord(ref, sourceShape, PRIVILEGED_VIEWER)));
      }
    }
  }

  const shape = shapeOf(collection);
  await tx.run(`DELETE FROM ${shape.table} WHERE id = ?`, [id]);
  const record: RecordJson = serializeRecord(row, shape, PRIVILEGED_VIEWER);
  await emit(deps, tx, new Change('delete', database, collection, record, record));
}
