import type { Collection } from '../collections/model.ts';
import type { RequestContext } from '../context.ts';
import type { RecordDeps } from './deps.ts';
import type { ListQuery } from './query-params.ts';
import { finishRecords, type ListResult, listRecords, type OutputOptions, viewRecord } from './read.ts';
import type { RecordJson } from './serialize.ts';
import { createRecord, deleteRecord, updateRecord } from './write.ts';

/** The records domain, as routes, auth flows and workflows call it. */
export class RecordService {
  constructor(readonly deps: RecordDeps) {}

  list(ctx: RequestContext, collection: Collection, query: ListQuery): Promise<ListResult> {
    return listRecords(this.deps, ctx, collection, query);
  }

  view(ctx: RequestContext, collection: Collection, id: string, options: OutputOptions = {}): Promise<unknown> {
    return viewRecord(this.deps, ctx, collection, id, options);
  }

  create(ctx: RequestContext, collection: Collection, input: unknown, options: OutputOptions = {}): Promise<unknown> {
    return createRecord(this.deps, ctx, collection, input, options);
  }

  update(ctx: RequestContext, collection: Collection, id: string, input: unknown, options: OutputOptions = {}): Promise<unknown> {
    return updateRecord(this.deps, ctx, collection, id, input, options);
  }

  delete(ctx: RequestContext, collection: Collection, id: string): Promise<void> {
    return deleteRecord(this.deps, ctx, collection, id);
  }

  /** Applies `expand` and `fields` to records about to be returned, under the caller's access rules. */
  output(ctx: RequestContext, collection: Collection, records: RecordJson[], options: OutputOptions): Promise<unknown[]> {
    return finishRecords(this.deps, ctx, collection, records, options);
  }
}
