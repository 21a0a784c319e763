import type { FastifyInstance } from 'fastify';
import type { CronService } from '../../jobs/scheduler.ts';
import { requireAdmin } from '../guards.ts';

type IdParams = { Params: { id: string } };

/** Cron jobs of the `x-dbname` database (API contract §7). */
export function cronRoutes(cron: CronService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/webhooks/cron', async (req) => {
      requireAdmin(req.ctx);
      return cron.list(req.ctx.dbName, req.ctx.db, req.query as Record<string, unknown>);
    });

    app.post('/api/webhooks/cron', async (req) => {
      requireAdmin(req.ctx);
      return cron.create(req.ctx.dbName, req.ctx.db, req.body);
    });

    app.get<IdParams>('/api/webhooks/cron/:id', async (req) => {
      requireAdmin(req.ctx);
      return cron.get(req.ctx.dbName, req.ctx.db, req.params.id);
    });

    app.patch<IdParams>('/api/webhooks/cron/:id', async (req) => {
      requireAdmin(req.ctx);
      return cron.update(req.ctx.dbName, req.ctx.db, req.params.id, req.body ?? {});
    });

    app.delete<IdParams>('/api/webhooks/cron/:id', async (req, reply) => {
      requireAdmin(req.ctx);
      await cron.remove(req.ctx.dbName, req.ctx.db, req.params.id);
      return reply.status(204).send();
    });
  };
}
