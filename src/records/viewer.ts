import type { RequestContext } from '../context.ts';
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

/** What administrators (and webhook payloads) see. */
export const PRIVILEGED_VIEWER: Viewer = { privileged: true };
