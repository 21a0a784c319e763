import { checkOutputOptions } from '../read.ts';
import { withResolvedBody } from '../modifiers.ts';
import { enter, type WritePlan } from './plan.ts';

/**
 * Step 3: the collection's rule for the write, compiled for this caller. Throws 403 when the action is
 * closed to the caller, before anything else can refuse the request (whatever the body). A create's
 * rule reads the values it would store as `@request.body` (modifiers are values, PocketBase ≥ 0.23)
 * and is checked against the new row (statement); an update's is the condition the stored row must
 * meet (load). Then the answer's `expand` and `fields`.
 */
export function rules(plan: WritePlan): WritePlan {
  enter(plan, 'rules');
  const { deps, ctx, collection, collections, shape } = plan.scope;
  const caller = plan.action === 'create' && plan.modifiers ? withResolvedBody(ctx, shape, plan.values) : ctx;
  plan.rule = deps.access.condition(caller, collection, plan.action, collections);
  checkOutputOptions(collections, collection, plan.options);
  return plan;
}
