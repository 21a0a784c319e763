import type { FastifyInstance } from 'fastify';
import type { WebhookService } from '../../webhooks/service.ts';
import { requireAdmin } from '../guards.ts';

/** Webhook logs of the `x-dbname` database (API contract §7). */
export function webhookRoutes(webhooks: WebhookService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/webhooks/logs', async (req) => {
      requireAdmin(req.ctx);
      return webhooks.listLogs(req.ctx.db, req.query as Record<string, unknown>);
    });

    app.post<{ Params: { id: string } }>('/api/webhooks/logs/:id/retry', async (req) => {
      requireAdmin(req.ctx);
      return webhooks.retry(req.ctx.db, req.ctx.dbName, req.params.id);
    });
  };
}
