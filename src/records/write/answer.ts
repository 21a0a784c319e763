import { isSystem } from '../../context.ts';
import { param } from '../query-params.ts';
import { finishRecords } from '../read.ts';
import { seesAsAdministrator, serializeRecord, withJson } from '../serialize.ts';
import { viewerFor, viewerOf } from '../viewer.ts';
import { enter, type WritePlan } from './plan.ts';

/**
 * Step 8, after commit: the record as the caller sees it, made by the read side's serialization
 * (`serializeRecord`, then `finishRecords` for `expand`, enrich hooks and `fields`). A caller who sees
 * the record as an administrator does (no hidden fields, no email to hide), asking for nothing to
 * expand or pick, gets the change's record itself, with the JSON a hook already made for it, unless
 * enrich hooks are to see it. The last step gives the answer, not the plan.
 */
export async function answer(plan: WritePlan): Promise<unknown> {
  enter(plan, 'answer');
  const { deps, ctx, shape } = plan.scope;
  const row = plan.row!;
  const change = plan.change!;
  const c = shape.collection;
  const viewer = c.type === 'auth' && deps.access.mayManage(ctx, c) ? await viewerFor(ctx, deps, c, await deps.collections.all(ctx.db), [row.id as string]) : viewerOf(ctx, deps);
  const enriched = !isSystem(ctx) && deps.events?.enriches(shape.collection) === true;
  if (!enriched && seesAsAdministrator(shape, viewer) && param(plan.options.expand) === '' && param(plan.options.fields) === '') {
    const json = change.madeJson;
    return json === undefined ? change.record : withJson(change.record, json);
  }
  const [out] = await finishRecords(deps, ctx, shape.collection, [serializeRecord(row, shape, viewer)], plan.options);
  return out;
}
