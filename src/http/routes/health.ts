import type { FastifyInstance } from 'fastify';
import { isPrivileged } from '../../context.ts';
import { ApiError } from '../../errors.ts';
import type { DatabaseRegistry } from '../../storage/index.ts';
import { VERSION } from '../../version.ts';

/** Headers a reverse proxy usually adds, which the dashboard reminds an administrator of. */
const PROXY_HEADERS = ['x-forwarded-for', 'x-real-ip', 'cf-connecting-ip', 'fly-client-ip', 'forwarded'];

/**
 * `GET /api/health`, as PocketBase v0.39 answers it (API contract §1, §23): `{message, code, data}`
 * with `data` empty for guests and users. An administrator also gets PocketBase's superuser fields
 * (whether a backup can start now, the address the request came from as Cairn sees it, a proxy
 * header it carried) and Cairn's own: the version, which node answered and whether it reaches its
 * database. A node whose database is unreachable answers 503, which takes it out of a load
 * balancer's rotation.
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
      // PocketBase writes `data` as a map: its keys sorted.
      const data: Record<string, unknown> = {};
      if (req.ctx && isPrivileged(req.ctx.auth)) {
        data.canBackup = backupsIdle();
        data.database = { driver: registry.dialect.name, ok };
        data.node = node;
        data.possibleProxyHeader = PROXY_HEADERS.find((h) => req.headers[h] !== undefined) ?? '';
        data.realIP = req.ip;
        data.version = VERSION;
      }
      if (!ok) return reply.status(503).send(new ApiError(503, 'The database is unreachable.', data).toJSON());
      return { message: 'API is healthy.', code: 200, data };
    });
  };
}
