import type { Collection } from '../../collections/model.ts';
import type { RequestContext } from '../../context.ts';
import type { Transaction } from '../../storage/index.ts';
import type { RecordDeps, RecordEvent } from '../deps.ts';
import type { RecordJson } from '../serialize.ts';

/** A record change as the change hooks get it. */
export class Change implements RecordEvent {
  private json?: string;
  readonly database: string;

  constructor(
    readonly action: RecordEvent['action'],
    readonly ctx: RequestContext,
    readonly collection: Collection,
    readonly record: RecordJson,
    readonly oldRecord?: RecordJson,
  ) {
    this.database = ctx.dbName;
  }

  recordJson(): string {
    return (this.json ??= JSON.stringify(this.record));
  }

  /** The record's JSON, if a hook made it. */
  get madeJson(): string | undefined {
    return this.json;
  }
}

/** Runs the change hooks (webhooks, files, realtime, pb_hooks' model events) inside the write's transaction. */
export async function emit(deps: RecordDeps, tx: Transaction, event: RecordEvent): Promise<void> {
  for (const hook of deps.changeHooks) await hook(tx, event);
}

/** Whether no change hook writes in the transaction for this change (they only act after commit). */
export function changeWritesNothing(deps: RecordDeps, collection: Collection, action: RecordEvent['action']): boolean {
  return deps.changeHooks.every((hook) => hook.writes !== undefined && !hook.writes(collection, action));
}
