import { notFound } from '../../errors.ts';
import { prepareAuthUpdate } from '../auth-fields.ts';
import { selectByIdToWrite } from '../read.ts';
import { enter, txOf, type WritePlan } from './plan.ts';
import { authState, sameAuthState } from './values.ts';

/**
 * Step 5 of an update, the first inside its transaction: the stored row, which must meet the update's
 * rule (404 otherwise; with modifiers in the body the rule is checked once the values are known, in
 * validate). An account prepared against a state that changed since (a concurrent password change, an
 * earlier write of the same batch), or not prepared at all, is prepared again against the current
 * one: only such a write pays for hashing inside the transaction.
 */
export async function load(plan: WritePlan): Promise<WritePlan> {
  enter(plan, 'load');
  const { deps, collection, shape } = plan.scope;
  const tx = txOf(plan);
  const before = await selectByIdToWrite(tx, shape, plan.id, plan.rule !== null && plan.modifiers ? null : plan.rule, 'update');
  if (!before) throw notFound();
  plan.before = before;
  if (collection.type === 'auth') {
    const state = (await authState(tx, shape, plan.id, null))!;
    if (!plan.auth || !plan.authState || !sameAuthState(plan.authState, state)) plan.auth = await prepareAuthUpdate(plan.input, state, plan.manager, deps);
  }
  return plan;
}
