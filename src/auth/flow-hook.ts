import type { Collection } from '../collections/model.ts';
import { type RequestContext, systemContext } from '../context.ts';
import type { RecordJson } from '../records/serialize.ts';
import type { RecordService } from '../records/service.ts';

/** The requests of the auth flows that application hooks see (`onRecordAuthFlowRequest`). */
export type FlowAction = 'request-verification' | 'request-password-reset' | 'request-email-change' | 'request-otp';

/**
 * Runs before a flow's request mails an account (application hooks): false when a handler did not go
 * on (nothing is sent; the answer is the same); throwing refuses the request. `record` reads the account.
 */
export type FlowRequestHook = (ctx: RequestContext, collection: Collection, action: FlowAction, record: () => Promise<RecordJson>, newEmail?: string) => Promise<boolean>;

/** Whether the hooks (if any) let a request go on to mail the account `accountId`. */
export function flowProceeds(
  hook: FlowRequestHook | undefined,
  records: RecordService,
  ctx: RequestContext,
  collection: Collection,
  action: FlowAction,
  accountId: string,
  newEmail?: string,
): Promise<boolean> {
  if (!hook) return Promise.resolve(true);
  const record = () => records.view(systemContext(ctx.dbName, ctx.db), collection, accountId) as Promise<RecordJson>;
  return hook(ctx, collection, action, record, newEmail);
}
