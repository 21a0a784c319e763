import type { Collection } from '../../collections/model.ts';
import type { RequestContext } from '../../context.ts';
import type { Queryable, Row, Transaction } from '../../storage/index.ts';
import type { RecordDeps } from '../deps.ts';
import type { OutputOptions } from '../read.ts';
import { hooks } from './hooks.ts';
import { load } from './load.ts';
import { parse } from './parse.ts';
import { newPlan, objectInput, type RecordWrite, refuseViews, type WriteScope, writeScope } from './plan.ts';
import { rules } from './rules.ts';
import { recordWriteOf } from './run.ts';
import { stage } from './stage.ts';
import { statement } from './statement.ts';
import { validate } from './validate.ts';

export async function prepareUpdate(deps: RecordDeps, ctx: RequestContext, collection: Collection, id: string, input: unknown, options: OutputOptions = {}): Promise<RecordWrite> {
  refuseViews(collection);
  const body = objectInput(input);
  return planUpdate(await writeScope(deps, ctx, collection), id, body, options, ctx.db);
}

/**
 * An update, one pass forward: parse → rules → stage before the transaction, load → validate → hooks
 * → statement inside it, answer after commit. Its values are made from the stored row, so it validates
 * inside the transaction, after its rule. `reader` reads the account state the password checks need
 * before the transaction (the database, or the transaction itself when planned inside one).
 */
export async function planUpdate(s: WriteScope, id: string, input: Record<string, unknown>, options: OutputOptions, reader: Pick<Queryable, 'get'>): Promise<RecordWrite> {
  const plan = newPlan('update', s, input, options, id);
  plan.reader = reader;
  await stage(rules(parse(plan)));
  return recordWriteOf(plan, async (p) => hooks(await validate(await load(p)), statement));
}

/**
 * An update Cairn derives itself from the stored row `before` (a delete clearing references to the
 * deleted record), in `tx`: no rule, no validation of the values it sets, but the update hooks and the
 * change hooks as for any update.
 */
export async function applyDerivedUpdate(s: WriteScope, tx: Transaction, before: Row, values: Map<string, unknown>): Promise<void> {
  const plan = newPlan('update', s, {}, {}, before.id as string);
  plan.tx = tx;
  plan.before = before;
  plan.values = values;
  plan.derived = true;
  await hooks(parse(plan), statement);
}
