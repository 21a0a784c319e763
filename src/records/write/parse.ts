import { newRecordId } from '../../lib/ids.ts';
import { givenIdError } from './given-id.ts';
import { hasModifiers } from '../modifiers.ts';
import { enter, objectInput, type WritePlan } from './plan.ts';

/**
 * Step 1, before the transaction: the body as an object, the record's id (a create's given or new
 * one; a bad one is a field error reported with the others), whether the body sends write modifiers,
 * and the application hooks around the write. Uploads arrive in the body as staged files, which the
 * field types check in `validate` and `stage` puts in storage.
 */
export function parse(plan: WritePlan): WritePlan {
  enter(plan, 'parse');
  const { ctx, collection, shape, deps } = plan.scope;
  plan.input = objectInput(plan.input);
  if (plan.action === 'create') {
    const given = plan.input.id;
    plan.id = newRecordId();
    if (given !== undefined && given !== '') {
      const error = givenIdError(collection, given);
      if (error === undefined) plan.id = given as string;
      else plan.errors.id = error;
    }
  }
  // Rules read `@request.body` as sent; with a modifier they read the value it resolves to (rules).
  plan.modifiers = hasModifiers(ctx.request.body, shape);
  plan.around = deps.events?.around(plan.action, collection);
  return plan;
}
