import type { Collection } from '../collections/model.ts';
import type { RequestContext } from '../context.ts';
import { type FieldError, notFound, validationFailed } from '../errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { nowIso } from '../lib/time.ts';
import { type Queryable, raw, type Row, type Sql, sql, type Transaction } from '../storage/index.ts';
import { type AuthPrepared, passwordErrorsFirst, prepareAuthUpdate, settleAuthChanges } from './auth-fields.ts';
import type { RecordDeps } from './deps.ts';
import { refusalsOf } from './draft.ts';
import { checkOutputOptions, type OutputOptions, selectById } from './read.ts';
import { type RecordJson, serializeRecord } from './serialize.ts';
import { ROOT_ALIAS, type RecordShape } from './shape.ts';
import { prepareValues } from './validate.ts';
import { hasModifiers, withResolvedBody } from './modifiers.ts';
import { PRIVILEGED_VIEWER } from './viewer.ts';
import {
  answer,
  canonical,
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

/** What an update writes: the fields it sets and, for an auth record, its system columns. */
interface UpdateValues {
  values: Map<string, unknown>;
  auth: AuthPrepared | undefined;
  /** Values Cairn itself derived from the stored ones (a cleared reference): their relations need no check. */
  derived?: boolean;
}

/**
 * Writes an update of the record `before` (read in `tx`): checks relations, writes the columns, its
 * files and the change hooks, wrapped in the collection's update hooks when it has any (which see
 * `before` with the request's `planned` values, and may change them). Returns the updated row and
 * its change. Used by the records API and by deletes that clear references to a deleted record.
 */
export async function applyUpdate(
  s: WriteScope,
  tx: Transaction,
  before: Row,
  planned: UpdateValues,
  errors: Record<string, FieldError>,
): Promise<{ row: Row; change: Change }> {
  const { deps, ctx, collection, shape } = s;
  const id = before.id as string;
  let done: { row: Row; change: Change } | undefined;
  const write = async (values: Map<string, unknown>, auth: AuthPrepared | undefined, errors: Record<string, FieldError>): Promise<RecordJson> => {
    if (values !== planned.values || !planned.derived) await checkRelations(tx, s.collections, shape, values, errors);
    if (Object.keys(errors).length > 0) throw validationFailed(passwordErrorsFirst(errors), 'Failed to update record.');
    const columns = columnValues(shape, values, auth);
    columns.set('updated', nowIso());
    const sets = [...columns.keys()].map((c) => `${quoteIdent(c)} = ?`).join(', ');
    const row = (await tx.get<Row>(`UPDATE ${shape.table} SET ${sets} WHERE id = ? RETURNING ${shape.returningList}`, [...columns.values(), id]))!;
    await deps.files?.store(tx, ctx.dbName, collection, id, values, canonical(shape, before));
    const change = new Change('update', ctx, collection, serializeRecord(row, shape, PRIVILEGED_VIEWER), serializeRecord(before, shape, PRIVILEGED_VIEWER));
    await emit(deps, tx, change);
    done = { row, change };
    return change.record;
  };

  const around = deps.events?.around('update', collection);
  if (!around) {
    Object.assign(errors, planned.auth?.errors);
    await write(planned.values, planned.auth, errors);
    return done!;
  }
  const refusals = refusalsOf({ ...errors, ...planned.auth?.errors });
  if (refusals) throw validationFailed(refusals, 'Failed to update record.');
  let original: RecordJson | undefined;
  const originalOf = () => (original ??= serializeRecord(before, shape, PRIVILEGED_VIEWER));
  const makeRecord = () => {
    const record: Record<string, unknown> = { ...originalOf() };
    for (const [name, value] of planned.values) record[name] = value;
    for (const key of ['email', 'emailVisibility', 'verified']) if (planned.auth?.columns.has(key)) record[key] = planned.auth.columns.get(key);
    return record;
  };
  await runHooked(around, s, tx, makeRecord, originalOf, async (changes, record) => {
    if (changes.size === 0) {
      Object.assign(errors, planned.auth?.errors);
      return write(planned.values, planned.auth, errors);
    }
    const { values, errors: left } = withHookChanges(s, changes, planned.values, errors, canonical(shape, before));
    let auth = planned.auth;
    if (collection.type === 'auth') auth = await settleAuthChanges(changes, record!, auth ?? { columns: new Map(), errors: {} }, false, deps.minPasswordLength);
    Object.assign(left, auth?.errors);
    return write(values, auth, left);
  });
  return done!;
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
  // Administrators, and callers the collection's manage rule lets through, change the account's
  // email, password and `verified` as administrators do.
  const manager = collection.type === 'auth' && (s.privileged || (deps.access.mayManage(ctx, collection) && (await deps.access.manages(ctx, collection, s.collections, id, reader))));
  if (collection.type === 'auth') {
    const state = await authState(reader, shape, id, access);
    if (state) auth = { state, prepared: await prepareAuthUpdate(input, state, manager, deps.minPasswordLength) };
  }
  // Before the record is read and checked (inside the transaction): a refused update's uploads are
  // removed when its request settles.
  await deps.files?.upload?.(ctx.dbName, collection, id, input);

  let done: { row: Row; change: Change } | undefined;
  return {
    action: 'update',
    async apply(tx) {
      try {
        // Modifiers are values: with one in the body, the rule reads the value the update stores,
        // which depends on the stored record, so the record is read first and the rule checked after.
        const modifiers = access !== null && hasModifiers(ctx.request.body, shape);
        const before = await selectById(tx, shape, id, modifiers ? null : access);
        if (!before) throw notFound();
        let authPrepared: AuthPrepared | undefined;
        if (collection.type === 'auth') {
          // Prepared against a state that changed since (a concurrent password change, or an earlier
          // write of the same batch), or not prepared at all: prepared against the current one. Only
          // such a write pays for hashing inside the transaction.
          const state = (await authState(tx, shape, id, null))!;
          authPrepared = auth && sameAuthState(auth.state, state) ? auth.prepared : await prepareAuthUpdate(input, state, manager, deps.minPasswordLength);
        }
        const { values, errors } = prepareValues(collection, shape, input, canonical(shape, before), s.privileged);
        if (modifiers) {
          const resolved = deps.access.condition(withResolvedBody(ctx, shape, values), collection, 'update', s.collections);
          if (resolved && !(await selectById(tx, shape, id, resolved))) throw notFound();
        }
        // As PocketBase: a record's id is not changed by an update.
        if (input.id !== undefined && input.id !== before.id) errors.id = { code: 'validation_pk_change', message: 'The record primary key cannot be changed.' };
        done = await applyUpdate(s, tx, before, { values, auth: authPrepared }, errors);
      } catch (err) {
        throw uniqueViolation(err, collection, tx.dialect);
      }
    },
    answer: () => answer(deps, ctx, shape, done!.row, done!.change, options),
  };
}
