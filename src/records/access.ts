import type { Collection } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import type { RequestContext } from '../context.ts';
import type { Resolver } from '../rules/compile.ts';
import type { Queryable, Sql } from '../storage/index.ts';

export type RecordAction = 'list' | 'view' | 'create' | 'update' | 'delete';

/**
 * Decides what a caller may do with records. The records layer asks it on every path that reads or
 * writes records; the rules domain provides the implementation that enforces collection rules.
 */
export interface RecordAccess {
  /**
   * The condition (over the row aliased `t0`) a record must meet for `action`, or null when the
   * caller may act on every record. Throws 403 when the action is closed to the caller.
   */
  condition(ctx: RequestContext, collection: Collection, action: RecordAction, collections: CollectionSet): Sql | null;
  /**
   * Whether the view rule surely lets a record caller see its own account, decided from the caller
   * alone (an open rule, or `id = @request.auth.id`): the view then answers from the row its token
   * was checked against. False when it cannot tell: the record is read under the rule.
   */
  showsOwnRecord(ctx: RequestContext, collection: Collection): boolean;
  /** The resolver for the caller's own `filter` and `sort` parameters. */
  filterResolver(ctx: RequestContext, collection: Collection, collections: CollectionSet): Resolver;
  /** Whether the caller sees hidden fields and may write admin-only fields (`role`, `verified`). */
  privileged(ctx: RequestContext): boolean;
  /**
   * Whether the caller manages the auth record `id` (read through `q`) as an administrator would:
   * privileged callers, and auth records the collection's `manageRule` lets through (PocketBase ≥
   * 0.23): they set `verified` and change email and password without the old one.
   */
  manages(ctx: RequestContext, collection: Collection, collections: CollectionSet, id: string, q: Pick<Queryable, 'get'>): Promise<boolean>;
  /**
   * Which of the auth records `ids` of `collection` the caller manages through its `manageRule` (one
   * query for them all): PocketBase shows their `email` to the manager whatever `emailVisibility`
   * says. Empty for administrators (they see every email anyway) and collections without the rule.
   */
  managedAmong(ctx: RequestContext, collection: Collection, collections: CollectionSet, ids: readonly string[], q?: Pick<Queryable, 'all'>): Promise<Set<string>>;
  /** Whether the collection has a manage rule a caller like this one could pass (decides whether `manages` is worth asking). */
  mayManage(ctx: RequestContext, collection: Collection): boolean;
  /**
   * The condition (over the row aliased `t0`) an auth record of `collection` meets when the caller
   * manages it through the `manageRule`, for a record not read by id (a realtime message's, which may
   * be a deleted record's snapshot); undefined when the caller manages none that way (administrators
   * see every email anyway).
   */
  manageCondition(ctx: RequestContext, collection: Collection, collections: CollectionSet): Sql | undefined;
}
