import type { FastifyInstance, RouteOptions } from 'fastify';
import type { CollectionService } from '../../collections/service.ts';
import { buildOpenApiDocument, type RouteInfo } from '../../openapi/document.ts';
import { requireAdmin } from '../guards.ts';

/**
 * Collects the app's routes as they are registered (Fastify's `onRoute`), for the OpenAPI document.
 * Call before any route is registered.
 */
export function collectRoutes(app: FastifyInstance): RouteInfo[] {
  const routes: RouteInfo[] = [];
  app.addHook('onRoute', (r: RouteOptions) => {
    for (const method of [r.method].flat()) {
      // HEAD routes are Fastify's copies of GET routes; `OPTIONS *` is the CORS preflight; the
      // dashboard's pages (`/`, `/_/…`) are not part of the API.
      if (method === 'HEAD' || (method === 'OPTIONS' && r.url === '*') || !r.url.startsWith('/api/')) continue;
      routes.push({ method, url: r.url, schema: r.schema as RouteInfo['schema'], database: (r.config as { database?: boolean } | undefined)?.database !== false });
    }
  });
  return routes;
}

/** `GET /api/openapi.json` (API contract §15): administrators only; collections of the x-dbname database. */
export function openApiRoutes(collections: CollectionService, routes: readonly RouteInfo[]) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/openapi.json', async (req) => {
      requireAdmin(req.ctx);
      return buildOpenApiDocument({ routes, collections: (await collections.all(req.ctx.db)).list, database: req.ctx.dbName });
    });
  };
}
