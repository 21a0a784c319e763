import type { Collection } from '../collections/model.ts';
import type { RequestContext } from '../context.ts';
import type { RecordDeps } from './deps.ts';
import type { ListQuery } from './query-params.ts';
import { finishRecords, type ListResult, listRecords, type OutputOptions, viewRecord } from './read.ts';
import type { JsonText, RecordJson } from './serialize.ts';
import { prepareUpsert } from './upsert.ts';
import { prepareDelete } from './delete.ts';
import { prepareCreate } from './write/create.ts';
import { commitWrite, type RecordWrite } from './write/plan.ts';
import { prepareUpdate } from './write/update.ts';

/**
 * The records domain, as routes, auth flows and workflows call it. `create`, `update` and `delete`
 * each run in a transaction of their own; `prepare…` hand back a `RecordWrite` for callers that run
 * several writes in one transaction (batches).
 */
export class RecordService {
  constructor(readonly deps: RecordDeps) {}

  list(ctx: RequestContext, collection: Collection, query: ListQuery): Promise<ListResult> {
    return listRecords(this.deps, ctx, collection, query);
  }

  view(ctx: RequestContext, collection: Collection, id: string, options: OutputOptions = {}): Promise<unknown> {
    return viewRecord(this.deps, ctx, collection, id, options);
  }

  /** `list` as the HTTP answer: JSON text rendered from the rows when nothing is to expand, pick or enrich. */
  listAnswer(ctx: RequestContext, collection: Collection, query: ListQuery): Promise<ListResult | JsonText> {
    return listRecords(this.deps, ctx, collection, query, true);
  }

  /** `view` as the HTTP answer: JSON text rendered from the row when nothing is to expand, pick or enrich. */
  viewAnswer(ctx: RequestContext, collection: Collection, id: string, options: OutputOptions = {}): Promise<unknown> {
    return viewRecord(this.deps, ctx, collection, id, options, true);
  }

  async create(ctx: RequestContext, collection: Collection, input: unknown, options: OutputOptions = {}): Promise<unknown> {
    return commitWrite(ctx.db, await this.prepareCreate(ctx, collection, input, options));
  }

  async update(ctx: RequestContext, collection: Collection, id: string, input: unknown, options: OutputOptions = {}): Promise<unknown> {
    return commitWrite(ctx.db, await this.prepareUpdate(ctx, collection, id, input, options));
  }

  async delete(ctx: RequestContext, collection: Collection, id: string): Promise<void> {
    await commitWrite(ctx.db, await this.prepareDelete(ctx, collection, id));
  }

  prepareCreate(ctx: RequestContext, collection: Collection, input: unknown, options: OutputOptions = {}): Promise<RecordWrite> {
    return prepareCreate(this.deps, ctx, collection, input, options);
  }

  prepareUpdate(ctx: RequestContext, collection: Collection, id: string, input: unknown, options: OutputOptions = {}): Promise<RecordWrite> {
    return prepareUpdate(this.deps, ctx, collection, id, input, options);
  }

  /** Create or update by the input's `id` (PocketBase's batch upsert). */
  prepareUpsert(ctx: RequestContext, collection: Collection, input: unknown, options: OutputOptions = {}): Promise<RecordWrite> {
    return prepareUpsert(this.deps, ctx, collection, input, options);
  }

  prepareDelete(ctx: RequestContext, collection: Collection, id: string): Promise<RecordWrite> {
    return prepareDelete(this.deps, ctx, collection, id);
  }

  /** Applies `expand` and `fields` to records about to be returned, under the caller's access rules. */
  output(ctx: RequestContext, collection: Collection, records: RecordJson[], options: OutputOptions): Promise<unknown[]> {
    return finishRecords(this.deps, ctx, collection, records, options);
  }
}
