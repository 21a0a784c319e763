import type { Collection } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import type { RequestContext } from '../context.ts';
import type { Queryable } from '../storage/index.ts';
import type { RecordDeps } from './deps.ts';
import type { Viewer } from './serialize.ts';

export function viewerOf(ctx: RequestContext, deps: Pick<RecordDeps, 'access'>): Viewer {
  const auth = ctx.auth;
  return {
    privileged: deps.access.privileged(ctx),
    authRecordId: auth.type === 'record' ? auth.id : undefined,
    authCollectionId: auth.type === 'record' ? auth.collectionId : undefined,
  };
}

/**
 * The viewer of records `ids` of `collection` about to be answered: as `viewerOf`, plus, for an auth
 * collection with a `manageRule`, the records among them the caller manages, whose email it sees
 * (PocketBase v0.23+). One query for all of them, only when the caller could manage any.
 */
export async function viewerFor(
  ctx: RequestContext,
  deps: Pick<RecordDeps, 'access'>,
  collection: Collection,
  collections: CollectionSet,
  ids: readonly string[],
  q?: Pick<Queryable, 'all'>,
): Promise<Viewer> {
  const viewer = viewerOf(ctx, deps);
  if (collection.type !== 'auth' || viewer.privileged || ids.length === 0 || !deps.access.mayManage(ctx, collection)) return viewer;
  const managed = await deps.access.managedAmong(ctx, collection, collections, ids, q);
  return managed.size === 0 ? viewer : { ...viewer, managed };
}

/** What administrators (and webhook payloads) see. */
export const PRIVILEGED_VIEWER: Viewer = { privileged: true };
