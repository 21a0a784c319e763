import type { FastifyInstance } from 'fastify';
import type { RequestLogs } from '../../logs/service.ts';
import { requireAdmin } from '../guards.ts';

type Query = Record<string, unknown>;
const noDb = { config: { database: false } } as const;

/** The request log (API contract §15, PocketBase v0.22's `/api/logs`): administrators only. */
export function logRoutes(logs: RequestLogs) {
  return async (app: FastifyInstance): Promise<void> => {
    app.addHook('onRequest', async (req) => {
      requireAdmin(req.ctx);
    });

    app.get('/api/logs', noDb, async (req) => logs.list(req.query as Query));

    app.get('/api/logs/stats', noDb, async (req) => logs.stats((req.query as Query).filter));

    app.get<{ Params: { id: string } }>('/api/logs/:id', noDb, async (req) => logs.get(req.params.id));
  };
}
