import { notFound } from '../../errors.ts';
import { checkAuthCreate, emailOptional } from '../auth-fields.ts';
import { withResolvedBody } from '../modifiers.ts';
import { selectById } from '../read.ts';
import { prepareValues } from '../validate.ts';
import { relationIdErrors } from './given-id.ts';
import { enter, txOf, type WritePlan } from './plan.ts';
import { canonical } from './values.ts';

/**
 * Step 2: every value the write would store, as the field types prepare them (modifiers resolved:
 * `credits+` becomes the `credits` stored; hidden and admin-only fields as the caller may write them),
 * and an auth record's email, flags and password checked. Problems are collected, not thrown: the
 * rule answers first, and hooks may still fix a value (stage decides).
 *
 * A create validates before its transaction. An update validates inside it, against the stored row
 * (load); with modifiers in the body its rule is checked here, on the values it stores.
 */
export async function validate(plan: WritePlan): Promise<WritePlan> {
  enter(plan, 'validate');
  const { deps, ctx, collection, shape, privileged } = plan.scope;
  if (plan.action === 'create') {
    const { values, errors } = prepareValues(collection, shape, plan.input, undefined, privileged);
    relationIdErrors(plan.scope.collections, shape, values, errors);
    plan.values = values;
    // The id's problem (parse) comes after the fields', as the answer lists them.
    plan.errors = Object.assign(errors, plan.errors);
    // A caller the manage rule may let through sets `verified` too; the rule is checked against the
    // new record once it is written (statement).
    plan.mayManage = collection.type === 'auth' && deps.access.mayManage(ctx, collection);
    if (collection.type === 'auth') plan.auth = checkAuthCreate(plan.input, privileged || plan.mayManage, deps, emailOptional(collection));
    return plan;
  }
  const tx = txOf(plan);
  const before = plan.before!;
  const { values, errors } = prepareValues(collection, shape, plan.input, canonical(shape, before), privileged);
  relationIdErrors(plan.scope.collections, shape, values, errors, plan.input);
  plan.values = values;
  plan.errors = errors;
  if (plan.rule !== null && plan.modifiers) {
    // Modifiers are values: the rule reads the value the update stores, which depends on the stored record.
    const resolved = deps.access.condition(withResolvedBody(ctx, shape, values), collection, 'update', plan.scope.collections);
    if (resolved && !(await selectById(tx, shape, plan.id, resolved))) throw notFound();
  }
  // As PocketBase: a record's id is not changed by an update.
  if (plan.input.id !== undefined && plan.input.id !== before.id) errors.id = { code: 'validation_pk_change', message: 'The record primary key cannot be changed.' };
  return plan;
}
