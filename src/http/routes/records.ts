import type { FastifyInstance } from 'fastify';
import type { CollectionService } from '../../collections/service.ts';
import type { FileStore } from '../../files/store.ts';
import type { RecordService } from '../../records/service.ts';
import { withRecordBody } from '../record-body.ts';

type CollectionParams = { Params: { collection: string } };
type RecordParams = { Params: { collection: string; id: string } };

/** PocketBase's record endpoints. Thin: parse (JSON or multipart with files), call the records domain, answer. */
export function recordRoutes(collections: CollectionService, records: RecordService, files: FileStore) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<CollectionParams>('/api/collections/:collection/records', async (req) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      return records.list(req.ctx, collection, req.query as Record<string, unknown>);
    });

    app.get<RecordParams>('/api/collections/:collection/records/:id', async (req) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      return records.view(req.ctx, collection, req.params.id, req.query as Record<string, unknown>);
    });

    app.post<CollectionParams>('/api/collections/:collection/records', async (req) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      return withRecordBody(req, files, collection, (input) => records.create(req.ctx, collection, input, req.query as Record<string, unknown>));
    });

    app.patch<RecordParams>('/api/collections/:collection/records/:id', async (req) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      return withRecordBody(req, files, collection, (input) => records.update(req.ctx, collection, req.params.id, input, req.query as Record<string, unknown>));
    });

    app.delete<RecordParams>('/api/collections/:collection/records/:id', async (req, reply) => {
      const collection = await collections.get(req.ctx.db, req.params.collection);
      await records.delete(req.ctx, collection, req.params.id);
      return reply.status(204).send();
    });
  };
}
