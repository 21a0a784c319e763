import type { FastifyInstance } from 'fastify';
import type { ApiKeyService } from '../../auth/api-keys.ts';
import { requireAdmin } from '../guards.ts';

type IdParams = { Params: { id: string } };

/** API keys of the `x-dbname` database (API contract §5); administrators and admin-role keys only. */
export function keyRoutes(keys: ApiKeyService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/keys', async (req) => {
      requireAdmin(req.ctx);
      return keys.create(req.ctx.db, req.ctx.dbName, req.body ?? {});
    });

    app.get('/api/keys', async (req) => {
      requireAdmin(req.ctx);
      return keys.list(req.ctx.db, req.query as Record<string, unknown>);
    });

    app.get<IdParams>('/api/keys/:id', async (req) => {
      requireAdmin(req.ctx);
      return keys.get(req.ctx.db, req.params.id);
    });

    app.patch<IdParams>('/api/keys/:id', async (req) => {
      requireAdmin(req.ctx);
      return keys.update(req.ctx.db, req.params.id, req.body ?? {});
    });

    app.delete<IdParams>('/api/keys/:id', async (req, reply) => {
      requireAdmin(req.ctx);
      await keys.delete(req.ctx.db, req.params.id);
      return reply.status(204).send();
    });

    app.post<IdParams>('/api/keys/:id/rotate', async (req) => {
      requireAdmin(req.ctx);
      return keys.rotate(req.ctx.db, req.ctx.dbName, req.params.id);
    });
  };
}
