import type { Collection } from '../../collections/model.ts';
import type { RequestContext } from '../../context.ts';
import type { RecordDeps } from '../deps.ts';
import type { OutputOptions } from '../read.ts';
import { hooks } from './hooks.ts';
import { parse } from './parse.ts';
import { newPlan, objectInput, type RecordWrite, refuseViews, type WriteScope, writeScope } from './plan.ts';
import { rules } from './rules.ts';
import { recordWriteOf } from './run.ts';
import { stage } from './stage.ts';
import { statement } from './statement.ts';
import { validate } from './validate.ts';

export async function prepareCreate(deps: RecordDeps, ctx: RequestContext, collection: Collection, input: unknown, options: OutputOptions = {}): Promise<RecordWrite> {
  refuseViews(collection);
  const body = objectInput(input);
  return planCreate(await writeScope(deps, ctx, collection), body, options);
}

/**
 * A create, one pass forward: parse → validate → rules → stage before the transaction, hooks →
 * statement inside it, answer after commit. `prepareCreate` with its scope loaded (upsert decides
 * between create and update with one scope).
 */
export async function planCreate(s: WriteScope, input: Record<string, unknown>, options: OutputOptions): Promise<RecordWrite> {
  const plan = await stage(rules(await validate(parse(newPlan('create', s, input, options)))));
  return recordWriteOf(plan, (p) => hooks(p, statement));
}
