import type { FastifyInstance } from 'fastify';
import { collectionJson } from '../../collections/json.ts';
import type { CollectionService } from '../../collections/service.ts';
import { pagination, param } from '../../records/query-params.ts';
import { requireAdmin } from '../guards.ts';

export function collectionRoutes(collections: CollectionService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/collections', async (req) => {
      requireAdmin(req.ctx);
      const query = req.query as Record<string, unknown>;
      const { page, perPage } = pagination(query);
      const set = await collections.all(req.ctx.db);
      const type = param(query.type);
      const all = set.list.filter((c) => type === '' || c.type === type);
      return {
        page,
        perPage,
        totalItems: all.length,
        totalPages: Math.ceil(all.length / perPage),
        items: all.slice((page - 1) * perPage, page * perPage).map(collectionJson),
      };
    });

    app.post('/api/collections', async (req) => {
      requireAdmin(req.ctx);
      return collectionJson(await collections.create(req.ctx.db, req.body));
    });

    app.get<{ Params: { name: string } }>('/api/collections/:name', async (req) => {
      requireAdmin(req.ctx);
      return collectionJson(await collections.get(req.ctx.db, req.params.name));
    });

    app.patch<{ Params: { name: string } }>('/api/collections/:name', async (req) => {
      requireAdmin(req.ctx);
      return collectionJson(await collections.update(req.ctx.db, req.params.name, req.body ?? {}));
    });

    app.delete<{ Params: { name: string } }>('/api/collections/:name', async (req, reply) => {
      requireAdmin(req.ctx);
      await collections.remove(req.ctx.db, req.params.name);
      return reply.status(204).send();
    });
  };
}
