import type { Collection } from '../collections/model.ts';
import type { RequestContext, RequestInfo } from '../context.ts';
import type { Queryable } from '../storage/index.ts';
import type { RecordDeps } from './deps.ts';
import type { OutputOptions } from './read.ts';
import { planCreate } from './write/create.ts';
import { objectInput, type RecordWrite, type WriteScope, writeScope } from './write/plan.ts';
import { planUpdate } from './write/update.ts';

/** The request as rules see it, with another method: an upsert is checked as the write it becomes. */
function withMethod(request: RequestInfo, method: string): RequestInfo {
  // Read through, not copied: the HTTP layer's request info reads query and body lazily.
  return {
    method,
    headers: request.headers,
    get query() {
      return request.query;
    },
    get body() {
      return request.body;
    },
    get ip() {
      return request.ip;
    },
  };
}

/**
 * PocketBase's upsert (a batch's `PUT …/records`): an update when the input's `id` names a record of
 * the collection, else a create (with that id when one is given). Rules see the request as the PATCH
 * or POST it becomes. The choice is made before the transaction, from the committed state, so that the
 * chosen write is prepared there (password hashing); `apply` checks it again inside the transaction
 * and, when an earlier write of the same transaction (or a concurrent one) changed the answer,
 * prepares the other write there.
 */
export async function prepareUpsert(deps: RecordDeps, ctx: RequestContext, collection: Collection, input: unknown, options: OutputOptions = {}): Promise<RecordWrite> {
  const body = objectInput(input);
  const scope = await writeScope(deps, ctx, collection);
  const id = typeof body.id === 'string' && body.id !== '' ? body.id : undefined;
  const exists = async (q: Pick<Queryable, 'get'>): Promise<boolean> => id !== undefined && (await q.get(`SELECT id FROM ${scope.shape.table} WHERE id = ?`, [id])) !== undefined;
  const as = (method: string): WriteScope => ({ ...scope, ctx: { ...ctx, request: withMethod(ctx.request, method) } });
  const plan = (update: boolean, reader: Pick<Queryable, 'get'>) => (update ? planUpdate(as('PATCH'), id!, body, options, reader) : planCreate(as('POST'), body, options));

  const existed = await exists(ctx.db);
  let chosen = await plan(existed, ctx.db);
  return {
    get action() {
      return chosen.action;
    },
    get steps() {
      return chosen.steps;
    },
    async apply(tx, alone) {
      // Upserts of one new id at once: the second waits for the first's commit and then updates what
      // it created (on PostgreSQL each would otherwise see no row and the second's INSERT fail).
      if (!existed && id !== undefined) await deps.lock?.(tx, `cairn.upsert.${ctx.dbName}.${collection.id}.${id}`);
      const existsNow = await exists(tx);
      if (existsNow !== existed) chosen = await plan(existsNow, tx);
      await chosen.apply(tx, alone);
    },
    answer: () => chosen.answer(),
  };
}
