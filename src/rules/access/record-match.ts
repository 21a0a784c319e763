import type { Collection } from '../../collections/model.ts';
import type { CollectionSet } from '../../collections/service.ts';
import type { RequestContext } from '../../context.ts';
import { ROOT_ALIAS, shapeOf } from '../../records/shape.ts';
import type { Queryable, Sql } from '../../storage/index.ts';
import { list, raw, sql } from '../../storage/sql.ts';
import { RuleProgram } from './program.ts';
import { scopeOf } from './scope.ts';

const programs = new WeakMap<Collection, Map<string, RuleProgram>>();

/**
 * Whether one record meets a rule in this request (an auth collection's MFA, auth or manage rule), read
 * through `q` (a transaction that holds a record not yet committed). Programs are
 * cached per immutable collection object, as the access rules' are. Throws FilterError for a rule
 * that no longer compiles.
 */
function programOf(ctx: RequestContext, collection: Collection, collections: CollectionSet, rule: string): RuleProgram {
  let byText = programs.get(collection);
  if (!byText) {
    byText = new Map();
    programs.set(collection, byText);
  }
  let program = byText.get(rule);
  if (!program) {
    program = RuleProgram.build(rule, scopeOf(collection, collections), ctx.db.dialect);
    byText.set(rule, program);
  }
  return program;
}

export async function recordMatches(ctx: RequestContext, collection: Collection, collections: CollectionSet, rule: string, id: string, q: Pick<Queryable, 'get'> = ctx.db): Promise<boolean> {
  const program = programOf(ctx, collection, collections, rule);
  const t = raw(ROOT_ALIAS);
  const query = sql`SELECT 1 AS ok FROM ${raw(shapeOf(collection).table)} ${t} WHERE ${t}.id = ${id} AND ${program.condition(ctx)}`;
  return (await q.get(query.text, query.params)) !== undefined;
}

/** A rule's condition in this request, over the row aliased `t0`. Throws FilterError as `recordMatches`. */
export function ruleCondition(ctx: RequestContext, collection: Collection, collections: CollectionSet, rule: string): Sql {
  return programOf(ctx, collection, collections, rule).condition(ctx);
}

const CHUNK = 500;

/** Which of the records `ids` meet a rule in this request, one query per 500 ids. Throws FilterError as `recordMatches`. */
export async function recordsMatching(ctx: RequestContext, collection: Collection, collections: CollectionSet, rule: string, ids: readonly string[], q: Pick<Queryable, 'all'> = ctx.db): Promise<Set<string>> {
  const program = programOf(ctx, collection, collections, rule);
  const t = raw(ROOT_ALIAS);
  const out = new Set<string>();
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += CHUNK) {
    const query = sql`SELECT ${t}.id AS id FROM ${raw(shapeOf(collection).table)} ${t} WHERE ${t}.id IN (${list(unique.slice(i, i + CHUNK))}) AND ${program.condition(ctx)}`;
    for (const row of await q.all(query.text, query.params)) out.add(String(row.id));
  }
  return out;
}
