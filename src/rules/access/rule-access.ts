import { authSettingsOf } from '../../collections/auth-settings.ts';
import type { Collection, RuleName } from '../../collections/model.ts';
import type { CollectionSet } from '../../collections/service.ts';
import { isPrivileged, type RequestContext } from '../../context.ts';
import { forbidden, isApiError } from '../../errors.ts';
import type { RecordAccess, RecordAction } from '../../records/access.ts';
import { RecordFieldResolver } from '../../records/resolver.ts';
import { ROOT_ALIAS, shapeOf } from '../../records/shape.ts';
import type { Queryable } from '../../storage/index.ts';
import { raw, type Sql, sql } from '../../storage/sql.ts';
import { recordMatches, recordsMatching, ruleCondition } from './record-match.ts';
import type { Resolver } from '../compile.ts';
import { FilterError } from '../errors.ts';
import { parseCached } from '../index.ts';
import { holdsOnOwnRecord } from '../own-record.ts';
import { RuleProgram, ruleResolver } from './program.ts';
import { RefusedSpecialNames } from './request-names.ts';
import type { NameScope } from './request-ref.ts';
import { describe, RequestInputs } from './request-values.ts';
import { scopeOf } from './scope.ts';

export const RULE_OF: Record<RecordAction, RuleName> = {
  list: 'listRule',
  view: 'viewRule',
  create: 'createRule',
  update: 'updateRule',
  delete: 'deleteRule',
};

// Below both this file and record-match.ts, which compile rules in the same scope.
export { scopeOf } from './scope.ts';

type Compiled = RuleProgram | FilterError;

const NONE = sql`(1 = 0)`;

/**
 * Enforces collection rules (API contract §6, PocketBase semantics): `null` is for administrators
 * only (403 for everyone else), `""` lets everyone through, an expression is a condition on the
 * record. Administrators and `admin`-role API keys bypass rules; every other caller, other API
 * keys included, is subject to them.
 *
 * Programs are cached per collection object. Collection objects are immutable and replaced whenever
 * any collection of their database changes, so the cache forgets stale rules by itself.
 */
export class RuleAccess implements RecordAccess {
  private readonly programs = new WeakMap<Collection, Partial<Record<RecordAction, Compiled>>>();

  privileged(ctx: RequestContext): boolean {
    return isPrivileged(ctx.auth);
  }

  mayManage(ctx: RequestContext, collection: Collection): boolean {
    if (isPrivileged(ctx.auth)) return true;
    const rule = collection.type === 'auth' ? authSettingsOf(collection).manageRule : null;
    return typeof rule === 'string' && rule.trim() !== '' && ctx.auth.type === 'record';
  }

  async manages(ctx: RequestContext, collection: Collection, collections: CollectionSet, id: string, q: Pick<Queryable, 'get'>): Promise<boolean> {
    if (isPrivileged(ctx.auth)) return true;
    if (!this.mayManage(ctx, collection)) return false;
    try {
      return await recordMatches(ctx, collection, collections, authSettingsOf(collection).manageRule!, id, q);
    } catch (err) {
      // A manage rule that no longer compiles manages nothing.
      if (err instanceof FilterError) return false;
      throw err;
    }
  }

  async managedAmong(ctx: RequestContext, collection: Collection, collections: CollectionSet, ids: readonly string[], q: Pick<Queryable, 'all'> = ctx.db): Promise<Set<string>> {
    if (ids.length === 0 || isPrivileged(ctx.auth) || !this.mayManage(ctx, collection)) return new Set();
    try {
      return await recordsMatching(ctx, collection, collections, authSettingsOf(collection).manageRule!, ids, q);
    } catch (err) {
      if (err instanceof FilterError) return new Set();
      throw err;
    }
  }

  manageCondition(ctx: RequestContext, collection: Collection, collections: CollectionSet): Sql | undefined {
    if (isPrivileged(ctx.auth) || !this.mayManage(ctx, collection)) return undefined;
    try {
      return ruleCondition(ctx, collection, collections, authSettingsOf(collection).manageRule!);
    } catch (err) {
      if (err instanceof FilterError) return undefined;
      throw err;
    }
  }

  condition(ctx: RequestContext, collection: Collection, action: RecordAction, collections: CollectionSet): Sql | null {
    if (isPrivileged(ctx.auth)) return null;
    const rule = collection[RULE_OF[action]];
    // PocketBase's message for a superusers-only rule (API contract §23).
    if (rule === null) throw forbidden('Only superusers can perform this action.');
    if (rule.trim() === '') return null;
    const program = this.program(collection, action, rule, collections, ctx);
    try {
      if (program instanceof FilterError) throw program;
      return program.condition(ctx);
    } catch (err) {
      // A rule that no longer compiles (a collection it names was removed) closes the action.
      if (err instanceof FilterError) throw forbidden(`The ${action} rule of "${collection.name}" cannot be evaluated: ${err.describe()}.`);
      throw err;
    }
  }

  showsOwnRecord(ctx: RequestContext, collection: Collection): boolean {
    if (ctx.auth.type !== 'record') return false;
    const rule = collection.viewRule;
    if (rule === null) return false;
    if (rule.trim() === '') return true;
    try {
      return holdsOnOwnRecord(parseCached(rule), ctx.auth);
    } catch (err) {
      if (err instanceof FilterError) return false;
      throw err;
    }
  }

  private program(collection: Collection, action: RecordAction, rule: string, collections: CollectionSet, ctx: RequestContext): Compiled {
    let byAction = this.programs.get(collection);
    if (!byAction) {
      byAction = {};
      this.programs.set(collection, byAction);
    }
    let program = byAction[action];
    if (program === undefined) {
      try {
        program = RuleProgram.build(rule, scopeOf(collection, collections), ctx.db.dialect);
      } catch (err) {
        if (!(err instanceof FilterError)) throw err;
        program = err;
      }
      byAction[action] = program;
    }
    return program;
  }

  /**
   * Related records count in a caller's filter or sort only where the caller may view them, as expand
   * shows them: otherwise `author.name = "x"` or `secrets_via_post.value ~ "a%"` would read, one
   * guess at a time, records the caller may not see (PocketBase v0.22 only masks emails there).
   */
  private viewable(ctx: RequestContext, target: Collection, collections: CollectionSet, ref: Sql): Sql | null {
    let condition: Sql | null;
    try {
      condition = this.condition(ctx, target, 'view', collections);
    } catch (err) {
      if (isApiError(err) && err.status === 403) return NONE;
      throw err;
    }
    if (!condition) return null;
    return sql`${ref}.id IN (SELECT ${raw(ROOT_ALIAS)}.id FROM ${raw(shapeOf(target).table)} ${raw(ROOT_ALIAS)} WHERE ${condition})`;
  }

  /**
   * The resolver for the caller's own `filter` and `sort`. Administrators may use `@request.*` and
   * `@collection.*` there; everyone else gets PocketBase's 403 for them.
   */
  filterResolver(ctx: RequestContext, collection: Collection, collections: CollectionSet): Resolver {
    if (!isPrivileged(ctx.auth)) {
      return new RecordFieldResolver(collection, ROOT_ALIAS, {
        dialect: ctx.db.dialect,
        lookup: (n) => collections.find(n),
        allowHidden: false,
        special: new RefusedSpecialNames(() => forbidden('Only administrators can use @request and @collection in filter and sort.')),
        related: (target, ref) => this.viewable(ctx, target, collections, ref),
      });
    }
    const scope = scopeOf(collection, collections);
    const inputs = new RequestInputs(ctx, scope.lookup);
    const values: unknown[] = [];
    return ruleResolver(
      collection,
      scope,
      ctx.db.dialect,
      (ref) => {
        const value = describe(ref, inputs, collection, scope.lookup);
        return { index: values.push(value) - 1, value };
      },
      false,
    );
  }
}

/**
 * Checks rule text as saving a collection does: parsed and compiled against the collection (as it
 * will be saved) and the other collections of its database. Returns a message with the position.
 */
export function checkRule(collection: Collection, rule: string, others: readonly Collection[], dialect: RequestContext['db']['dialect'], options: { pocketBase?: boolean } = {}): string | undefined {
  const lower = collection.name.toLowerCase();
  const rest = others.filter((c) => c.id !== collection.id && c.name.toLowerCase() !== lower);
  const all = [...rest, collection];
  const scope: NameScope = {
    collection,
    authCollections: all.filter((c) => c.type === 'auth'),
    lookup: (name) => all.find((c) => c.name.toLowerCase() === name.toLowerCase() || c.id === name),
    anyAuthField: options.pocketBase,
  };
  try {
    RuleProgram.build(rule, scope, dialect);
    return undefined;
  } catch (err) {
    if (err instanceof FilterError) return err.describe();
    throw err;
  }
}
