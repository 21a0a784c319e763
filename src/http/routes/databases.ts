import type { FastifyInstance } from 'fastify';
import type { DatabaseRegistry } from '../../storage/index.ts';
import { requireAdmin } from '../guards.ts';

export function databaseRoutes(registry: DatabaseRegistry) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/databases', { config: { database: false } }, async (req) => {
      requireAdmin(req.ctx);
      return registry.list();
    });

    app.post('/api/databases', { config: { database: false } }, async (req) => {
      requireAdmin(req.ctx);
      const name = (req.body as { name?: unknown } | undefined)?.name;
      return registry.create(typeof name === 'string' ? name : '');
    });
  };
}
