import type { FastifyInstance, FastifyReply } from 'fastify';
import type { CollectionService } from '../../collections/service.ts';
import type { FileStore } from '../../files/store.ts';
import { RawAnswer } from '../../records/deps.ts';
import { JsonText, madeJson } from '../../records/serialize.ts';
import type { RecordService } from '../../records/service.ts';
import { withRecordBody } from '../record-body.ts';

type CollectionParams = { Params: { collection: string } };
type RecordParams = { Params: { collection: string; id: string } };
/** Record writes read their multipart body themselves, files streamed (plugins/form-body.ts). */
const uploads = { config: { multipart: true } } as const;

/** A written record, as the JSON text its write already made for a webhook event when there is one. */
function answer(reply: FastifyReply, record: unknown): unknown {
  const json = madeJson(record);
  if (json === undefined) return record;
  reply.type('application/json; charset=utf-8');
  return json;
}

/** An answer the records domain may have rendered as JSON text already (render.ts). */
function sent(reply: FastifyReply, value: unknown): unknown {
  if (value instanceof RawAnswer) {
    for (const [k, v] of Object.entries(value.headers)) reply.header(k, v);
    if (value.location !== undefined) return reply.redirect(value.location, value.status);
    reply.status(value.status);
    if (value.type) reply.type(value.type);
    return reply.send(value.body ?? '');
  }
  if (!(value instanceof JsonText)) return value;
  reply.type('application/json; charset=utf-8');
  return value.text;
}

/** PocketBase's record endpoints. Thin: parse (JSON or multipart with files), call the records domain, answer. */
export function recordRoutes(collections: CollectionService, records: RecordService, files: FileStore) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<CollectionParams>('/api/collections/:collection/records', async (req, reply) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      const around = records.deps.events?.readRequest?.('list', collection);
      if (around) return sent(reply, await around(req.ctx, collection, await records.list(req.ctx, collection, req.query as Record<string, unknown>)));
      return sent(reply, await records.listAnswer(req.ctx, collection, req.query as Record<string, unknown>));
    });

    app.get<RecordParams>('/api/collections/:collection/records/:id', async (req, reply) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      const around = records.deps.events?.readRequest?.('view', collection);
      if (around) return sent(reply, await around(req.ctx, collection, await records.view(req.ctx, collection, req.params.id, req.query as Record<string, unknown>)));
      return sent(reply, await records.viewAnswer(req.ctx, collection, req.params.id, req.query as Record<string, unknown>));
    });

    app.post<CollectionParams>('/api/collections/:collection/records', uploads, async (req, reply) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      return answer(reply, await withRecordBody(req, files, collection, (input) => records.create(req.ctx, collection, input, req.query as Record<string, unknown>)));
    });

    app.patch<RecordParams>('/api/collections/:collection/records/:id', uploads, async (req, reply) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      return answer(reply, await withRecordBody(req, files, collection, (input) => records.update(req.ctx, collection, req.params.id, input, req.query as Record<string, unknown>)));
    });

    app.delete<RecordParams>('/api/collections/:collection/records/:id', async (req, reply) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      await records.delete(req.ctx, collection, req.params.id);
      return reply.status(204).send();
    });
  };
}
