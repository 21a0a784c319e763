import type { Collection } from '../collections/model.ts';
import { type RequestContext, systemContext } from '../context.ts';
import { badRequest, isApiError } from '../errors.ts';
import type { RecordService } from './service.ts';
import { shapeOf } from './shape.ts';

/**
 * Deletes every record of a collection (PocketBase ≥ 0.23's `DELETE /api/collections/:c/truncate`),
 * each through the records domain's delete, so relations are settled (cascades, cleared references),
 * files removed and webhooks and realtime told, all in one transaction: a record that cannot go (a
 * required relation elsewhere points at it) leaves every record in place. The collection itself stays.
 */
export async function truncateCollection(records: RecordService, ctx: RequestContext, collection: Collection): Promise<void> {
  if (collection.type === 'view') throw badRequest('View collections cannot be truncated: they keep no records of their own.');
  if (collection.system) throw badRequest(`"${collection.name}" is a system collection and cannot be truncated.`);
  const system = systemContext(ctx.dbName, ctx.db);
  const ids = await ctx.db.all<{ id: string }>(`SELECT id FROM ${shapeOf(collection).table}`);
  const writes = await Promise.all(ids.map(({ id }) => records.prepareDelete(system, collection, id)));
  await ctx.db.transaction(async (tx) => {
    for (const write of writes) {
      try {
        await write.apply(tx);
      } catch (err) {
        // Already deleted by an earlier record's cascade (a relation of the collection to itself).
        if (isApiError(err) && err.status === 404) continue;
        throw err;
      }
    }
  });
}
