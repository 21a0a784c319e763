import { type FieldError, validationFailed } from '../../errors.ts';
import { givenIdError } from './given-id.ts';
import { passwordErrorsFirst, settleAuthChanges } from '../auth-fields.ts';
import { refusalsOf } from '../draft.ts';
import { type RecordJson, serializeRecord } from '../serialize.ts';
import { prepareValues } from '../validate.ts';
import { PRIVILEGED_VIEWER } from '../viewer.ts';
import { runHooked } from './chain.ts';
import { enter, txOf, type WritePlan, type WriteScope } from './plan.ts';
import { canonical } from './values.ts';

/** The step after the hooks: the statement, handed in by the runner (no step imports another). */
export type Next = (plan: WritePlan) => Promise<WritePlan>;

/**
 * Step 6, inside the transaction: the application hooks bound to the write (pb_hooks' `onRecordCreate`
 * and `onRecordUpdate`, through `RecordDeps.events`), whose last `next()` is `next`, the statement.
 * They see the record about to be written and may change it: what they change is prepared again as
 * an administrator's values (hook code is trusted), over what the request prepared. Without hooks the
 * plan goes straight on.
 */
export async function hooks(plan: WritePlan, next: Next): Promise<WritePlan> {
  enter(plan, 'hooks');
  return plan.action === 'create' ? aroundCreate(plan, next) : aroundUpdate(plan, next);
}

async function aroundCreate(plan: WritePlan, next: Next): Promise<WritePlan> {
  const { around, scope } = plan;
  // Without hooks, stage threw every problem already.
  if (!around) return next(plan);
  const errors = plan.errors;
  await runHooked(around, scope, txOf(plan), () => draftOf(plan), undefined, async (changes, record) => {
    if (changes.size === 0) unchangedCreate(plan, errors);
    else await settleCreate(plan, changes, record!, errors);
    await next(plan);
    return plan.change!.record;
  });
  return plan;
}

async function aroundUpdate(plan: WritePlan, next: Next): Promise<WritePlan> {
  const { around, scope } = plan;
  const { shape, collection, deps } = scope;
  if (!around) {
    Object.assign(plan.errors, plan.auth?.errors);
    return next(plan);
  }
  const refusals = refusalsOf({ ...plan.errors, ...plan.auth?.errors });
  if (refusals) throw validationFailed(refusals, 'Failed to update record.');
  const before = plan.before!;
  const planned = { values: plan.values, auth: plan.auth };
  let original: RecordJson | undefined;
  const originalOf = () => (original ??= serializeRecord(before, shape, PRIVILEGED_VIEWER));
  const makeRecord = () => {
    const record: Record<string, unknown> = { ...originalOf() };
    for (const [name, value] of planned.values) record[name] = value;
    for (const key of ['email', 'emailVisibility', 'verified']) if (planned.auth?.columns.has(key)) record[key] = planned.auth.columns.get(key);
    return record;
  };
  await runHooked(around, scope, txOf(plan), makeRecord, originalOf, async (changes, record) => {
    if (changes.size === 0) {
      Object.assign(plan.errors, plan.auth?.errors);
    } else {
      const { values, errors: left } = withHookChanges(scope, changes, planned.values, plan.errors, canonical(shape, before));
      let auth = planned.auth;
      if (collection.type === 'auth') auth = await settleAuthChanges(changes, record!, auth ?? { columns: new Map(), errors: {} }, false, deps);
      Object.assign(left, auth?.errors);
      // Values the hooks changed are checked as the caller's are (relations), even in an update Cairn derived.
      if (values !== plan.values) plan.derived = false;
      plan.values = values;
      plan.auth = auth;
      plan.errors = left;
    }
    await next(plan);
    return plan.change!.record;
  });
  return plan;
}

/** The record a create's hooks see before `next()`: what the request asked for, checked where it could be. */
function draftOf(plan: WritePlan): Record<string, unknown> {
  const { collection, shape } = plan.scope;
  const input = plan.input;
  const record: Record<string, unknown> = { id: plan.id, collectionId: collection.id, collectionName: collection.name, created: '', updated: '' };
  if (plan.auth) {
    const columns = plan.auth.columns;
    record.email = columns.has('email') ? columns.get('email') : input.email;
    record.emailVisibility = columns.get('emailVisibility') ?? false;
    record.verified = columns.get('verified') ?? false;
  }
  for (const f of shape.fields) record[f.name] = plan.values.has(f.name) ? plan.values.get(f.name) : input[f.name];
  return record;
}

/** A create whose hooks changed nothing writes what the request prepared, if it was valid. */
function unchangedCreate(plan: WritePlan, fieldErrors: Record<string, FieldError>): void {
  const auth = plan.auth;
  const errors = auth && Object.keys(auth.errors).length > 0 ? passwordErrorsFirst({ ...fieldErrors, ...auth.errors }) : fieldErrors;
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to create record.');
  if (auth && !auth.columns.has('passwordHash')) throw validationFailed({ password: { code: 'validation_required', message: 'Cannot be blank.' } }, 'Failed to create record.');
}

/**
 * What a create writes once its hooks ran: the values they changed prepared again (as an
 * administrator's, since hook code is trusted), on top of what the request prepared. Throws the
 * validation errors left.
 */
async function settleCreate(plan: WritePlan, changes: ReadonlyMap<string, unknown>, record: Record<string, unknown>, fieldErrors: Record<string, FieldError>): Promise<void> {
  const { shape, deps } = plan.scope;
  const { values, errors } = withHookChanges(plan.scope, changes, plan.values, fieldErrors, undefined);
  let id = plan.id;
  if (changes.has('id')) {
    delete errors.id;
    const wanted = changes.get('id');
    const error = givenIdError(plan.scope.collection, wanted);
    if (error !== undefined) errors.id = error;
    // Uploads were put in storage under the first id before the transaction.
    else if (shape.hasFiles) errors.id = { code: 'validation_id_fixed', message: 'The id of a record with file fields cannot be changed by a hook.' };
    else id = wanted as string;
  }
  const auth = plan.auth && (await settleAuthChanges(changes, record, plan.auth, true, deps));
  Object.assign(errors, auth?.errors);
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to create record.');
  plan.id = id;
  plan.values = values;
  plan.auth = auth;
}

/**
 * The values a write stores once its hooks changed some fields (`changes`, by key): those fields
 * prepared again, as an administrator's (hook code is trusted, and may set hidden and admin-only
 * fields), over what the request prepared, their errors replacing the request's. `existing` is the
 * stored record's values on update, undefined on create. The one place hook changes become values,
 * for creates and updates alike.
 */
function withHookChanges(
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
