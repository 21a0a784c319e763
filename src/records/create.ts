import type { Collection } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import { isSuperusers } from '../collections/superusers.ts';
import type { RequestContext } from '../context.ts';
import { badRequest, type FieldError, validationFailed } from '../errors.ts';
import { isRecordId, newRecordId, recordIdError } from '../lib/ids.ts';
import { nowIso } from '../lib/time.ts';
import type { Queryable, Row, Transaction } from '../storage/index.ts';
import { type AuthPrepared, passwordErrorsFirst, prepareAuthCreate, settleAuthChanges } from './auth-fields.ts';
import type { RecordDeps } from './deps.ts';
import { refusalsOf } from './draft.ts';
import { checkOutputOptions, type OutputOptions, selectById } from './read.ts';
import { type RecordJson, serializeRecord } from './serialize.ts';
import { insertSql, type RecordShape, shapeOf } from './shape.ts';
import { prepareValues } from './validate.ts';
import { withResolvedBody } from './modifiers.ts';
import { PRIVILEGED_VIEWER } from './viewer.ts';
import {
  answer,
  Change,
  checkRelations,
  columnValues,
  emit,
  objectInput,
  type RecordWrite,
  refuseViews,
  runHooked,
  uniqueViolation,
  withHookChanges,
  type WriteScope,
  writeScope,
} from './write.ts';

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

/** What a create writes: the id, the field values and, for an auth record, its system columns. */
interface CreateValues {
  id: string;
  values: Map<string, unknown>;
  auth: AuthPrepared | undefined;
}

/** The record a create's hooks see before `next()`: what the request asked for, checked where it could be. */
function draftOf(s: WriteScope, input: Record<string, unknown>, planned: CreateValues): Record<string, unknown> {
  const { collection, shape } = s;
  const record: Record<string, unknown> = { id: planned.id, collectionId: collection.id, collectionName: collection.name, created: '', updated: '' };
  if (planned.auth) {
    const columns = planned.auth.columns;
    record.email = columns.has('email') ? columns.get('email') : input.email;
    record.emailVisibility = columns.get('emailVisibility') ?? false;
    record.verified = columns.get('verified') ?? false;
  }
  for (const f of shape.fields) record[f.name] = planned.values.has(f.name) ? planned.values.get(f.name) : input[f.name];
  return record;
}

/**
 * What a create writes once its hooks ran: the values they changed prepared again (as an
 * administrator's, since hook code is trusted), on top of what the request prepared. Throws the
 * validation errors left.
 */
async function settleCreate(s: WriteScope, changes: ReadonlyMap<string, unknown>, record: Record<string, unknown>, planned: CreateValues, fieldErrors: Record<string, FieldError>): Promise<CreateValues> {
  const { shape } = s;
  const { values, errors } = withHookChanges(s, changes, planned.values, fieldErrors, undefined);
  let id = planned.id;
  if (changes.has('id')) {
    delete errors.id;
    const wanted = changes.get('id');
    if (!isRecordId(wanted)) errors.id = recordIdError(wanted);
    // Uploads were put in storage under the first id before the transaction.
    else if (shape.hasFiles) errors.id = { code: 'validation_id_fixed', message: 'The id of a record with file fields cannot be changed by a hook.' };
    else id = wanted;
  }
  const auth = planned.auth && (await settleAuthChanges(changes, record, planned.auth, true, s.deps.minPasswordLength));
  Object.assign(errors, auth?.errors);
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to create record.');
  return { id, values, auth };
}

/** What a create writes when its hooks changed nothing: what the request prepared, if it was valid. */
function unchanged(planned: CreateValues, fieldErrors: Record<string, FieldError>): CreateValues {
  const errors = planned.auth && Object.keys(planned.auth.errors).length > 0 ? passwordErrorsFirst({ ...fieldErrors, ...planned.auth.errors }) : fieldErrors;
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to create record.');
  if (planned.auth && !planned.auth.columns.has('passwordHash')) throw validationFailed({ password: { code: 'validation_required', message: 'Cannot be blank.' } }, 'Failed to create record.');
  return planned;
}

/** `prepareCreate` with its scope loaded (upsert decides between create and update with one scope). */
export async function planCreate(s: WriteScope, input: Record<string, unknown>, options: OutputOptions): Promise<RecordWrite> {
  const { deps, ctx, collection, shape } = s;
  // Every value the create would store, modifiers resolved (`credits+` becomes the `credits` it
  // stores); its errors are reported below, after the rule.
  const { values, errors } = prepareValues(collection, shape, input, undefined, s.privileged);
  // The rule reads those resolved values as `@request.body` (modifiers are values). Checked before
  // anything can refuse the request: a closed collection answers 403 whatever the body.
  const createRule = deps.access.condition(withResolvedBody(ctx, shape, values), collection, 'create', s.collections);
  checkOutputOptions(s.collections, collection, options);
  const around = deps.events?.around('create', collection);
  let id = newRecordId();
  if (input.id !== undefined && input.id !== '') {
    if (isRecordId(input.id)) id = input.id;
    else errors.id = recordIdError(input.id);
  }
  // Hashing is slow, so it happens before the transaction takes the write lock.
  // A caller the manage rule may let through sets `verified` too; the rule is checked against the new
  // record once it is written (below).
  const mayManage = collection.type === 'auth' && deps.access.mayManage(ctx, collection);
  const auth = collection.type === 'auth' ? await prepareAuthCreate(input, s.privileged || mayManage, deps.minPasswordLength) : undefined;
  if (around) {
    // Hooks may fix what the request got wrong; only what the caller may not ask for refuses it now.
    const refusals = refusalsOf({ ...errors, ...auth?.errors });
    if (refusals) throw validationFailed(refusals, 'Failed to create record.');
  } else {
    Object.assign(errors, auth?.errors);
    if (Object.keys(errors).length > 0) throw validationFailed(passwordErrorsFirst(errors), 'Failed to create record.');
  }
  await deps.files?.upload?.(ctx.dbName, collection, id, input);
  const declared = await declaredTypes(ctx.db, shape);

  let row: Row | undefined;
  let change: Change | undefined;
  const insert = async (tx: Transaction, planned: CreateValues): Promise<RecordJson> => {
    if (shape.hasRelations) {
      const relationErrors: Record<string, FieldError> = {};
      await checkRelations(tx, s.collections, shape, planned.values, relationErrors);
      if (Object.keys(relationErrors).length > 0) throw validationFailed(relationErrors, 'Failed to create record.');
    }
    if (collection.type === 'auth') await checkAuthIdFree(tx, s.collections, collection, planned.id);
    const columns = columnValues(shape, planned.values, planned.auth);
    const names = ['id', 'created', 'updated', ...columns.keys()];
    const now = nowIso();
    const params = [planned.id, now, now, ...columns.values()];
    let inserted: Row;
    if (declared !== undefined && names.length === 3 + shape.fields.length && names.every((name, i) => tx.dialect.insertKeeps!(declared.get(name) ?? '', params[i]))) {
      await tx.run(insertSql(shape, names, false), params);
      inserted = rowOf(names, params);
    } else {
      inserted = (await tx.get<Row>(insertSql(shape, names, true), params))!;
    }
    if (shape.hasFiles) await deps.files?.store(tx, ctx.dbName, collection, planned.id, planned.values);
    // As in PocketBase, the create rule is checked against the new record, before commit.
    if (createRule && !(await selectById(tx, shape, planned.id, createRule))) {
      throw badRequest('Failed to create record: the collection rule does not allow it.');
    }
    if (!s.privileged && mayManage && planned.auth?.columns.get('verified') === true && !(await deps.access.manages(ctx, collection, s.collections, planned.id, tx))) {
      throw validationFailed({ verified: { code: 'validation_admin_only', message: 'Only administrators can set this field.' } }, 'Failed to create record.');
    }
    change = new Change('create', ctx, collection, serializeRecord(inserted, shape, PRIVILEGED_VIEWER));
    await emit(deps, tx, change);
    row = inserted;
    return change.record;
  };

  const planned: CreateValues = { id, values, auth };
  return {
    action: 'create',
    async apply(tx) {
      try {
        if (!around) {
          await insert(tx, planned);
          return;
        }
        await runHooked(
          around,
          s,
          tx,
          () => draftOf(s, input, planned),
          undefined,
          (changes, record) => (changes.size === 0 ? insert(tx, unchanged(planned, errors)) : settleCreate(s, changes, record!, planned, errors).then((settled) => insert(tx, settled))),
        );
      } catch (err) {
        throw uniqueViolation(err, collection, tx.dialect);
      }
    },
    answer: () => answer(deps, ctx, shape, row!, change!, options),
  };
}

/**
 * As PocketBase (v0.23+): an auth record's id may not be one a record of another auth collection of
 * the database has, so that a rule comparing `@request.auth.id` with an id cannot mistake one
 * collection's user for another's. Checked in the write's transaction, after the values validate.
 */
async function checkAuthIdFree(tx: Transaction, collections: CollectionSet, collection: Collection, id: string): Promise<void> {
  for (const other of collections.list) {
    if (other.type !== 'auth' || other.id === collection.id || isSuperusers(other.id)) continue;
    if (await tx.get(`SELECT 1 AS taken FROM ${shapeOf(other).table} WHERE id = ?`, [id])) {
      throw validationFailed({ id: { code: 'validation_invalid_auth_id', message: 'Invalid or duplicated auth record id.' } }, 'Failed to create record.');
    }
  }
}
