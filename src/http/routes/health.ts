import type { FastifyInstance } from 'fastify';
import type { DatabaseRegistry } from '../../storage/index.ts';
import { VERSION } from '../../version.ts';

/**
 * `GET /api/health`: PocketBase's answer, plus which node answered and whether it reaches its
 * database (a load balancer takes a node whose database is unreachable out of rotation: 503).
 */
export function healthRoutes(registry: DatabaseRegistry, node: string) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/health', { config: { database: false } }, async (_req, reply) => {
      let ok = true;
      try {
        await registry.system.get('SELECT 1 AS ok');
      } catch {
        ok = false;
      }
      const data = { version: VERSION, node, database: { driver: registry.dialect.name, ok } };
      if (!ok) return reply.status(503).send({ code: 503, message: 'The database is unreachable.', data });
      return { code: 200, message: 'API is healthy.', data };
    });
  };
}
