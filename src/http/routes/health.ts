import type { FastifyInstance } from 'fastify';
import { isPrivileged } from '../../context.ts';
import type { DatabaseRegistry } from '../../storage/index.ts';
import { VERSION } from '../../version.ts';

/** Headers a reverse proxy usually adds, which the dashboard reminds an administrator of. */
const PROXY_HEADERS = ['x-forwarded-for', 'x-real-ip', 'cf-connecting-ip', 'fly-client-ip', 'forwarded'];

/**
 * `GET /api/health`: PocketBase's answer, plus which node answered and whether it reaches its
 * database (a load balancer takes a node whose database is unreachable out of rotation: 503). An
 * administrator also gets PocketBase's superuser fields: whether a backup can start now, the
 * address the request came from as Cairn sees it, and a proxy header it carried.
 */
export function healthRoutes(registry: DatabaseRegistry, node: string, backupsIdle: () => boolean) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/health', { config: { database: false } }, async (req, reply) => {
      let ok = true;
      try {
        await registry.system.get('SELECT 1 AS ok');
      } catch {
        ok = false;
      }
      const data: Record<string, unknown> = { version: VERSION, node, database: { driver: registry.dialect.name, ok } };
      if (req.ctx && isPrivileged(req.ctx.auth)) {
        data.canBackup = backupsIdle();
        data.realIP = req.ip;
        data.possibleProxyHeader = PROXY_HEADERS.find((h) => req.headers[h] !== undefined) ?? '';
      }
      if (!ok) return reply.status(503).send({ code: 503, message: 'The database is unreachable.', data });
      return { code: 200, message: 'API is healthy.', data };
    });
  };
}
