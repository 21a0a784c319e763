import { answer } from './answer.ts';
import type { RecordWrite, WritePlan } from './plan.ts';
import { uniqueViolation } from './statement.ts';

/**
 * A prepared plan as a `RecordWrite`: `apply` runs `inTransaction` (the plan's steps from the
 * transaction on) in the caller's transaction, `answer` the answer step after commit.
 */
export function recordWriteOf(plan: WritePlan, inTransaction: (plan: WritePlan) => Promise<WritePlan>): RecordWrite {
  return {
    action: plan.action,
    steps: plan.steps,
    async apply(tx, alone = false) {
      plan.tx = tx;
      plan.alone = alone;
      try {
        await inTransaction(plan);
      } catch (err) {
        throw uniqueViolation(err, plan.action === 'create' ? 'Failed to create record.' : 'Failed to update record.', tx.dialect);
      }
    },
    answer: () => answer(plan),
  };
}
