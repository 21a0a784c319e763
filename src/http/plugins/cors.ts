import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const EXPOSED_HEADERS = ['Retry-After', 'Content-Disposition'];

/**
 * Cross-origin requests from browser apps, which is how the PocketBase SDK is mostly used. Allowed
 * for every origin by default, as PocketBase does: Cairn authenticates with bearer tokens, never with
 * cookies, so a foreign page gains nothing a plain HTTP client lacks. `CAIRN_CORS_ORIGINS` narrows it.
 *
 * Preflights (`OPTIONS`) are @fastify/cors's, answered before the request context, so they need no
 * database or token. It runs in its own scope, which holds only its `OPTIONS *` route: its hook
 * copies and resolves its options on every request, several microseconds that a view by id notices.
 * Every other request gets the same headers it would set, worked out once here.
 */
export async function registerCors(app: FastifyInstance, origins: string[]): Promise<void> {
  const anyOrigin = origins.includes('*');
  await app.register(async (preflights) => {
    await preflights.register(cors, {
      origin: anyOrigin ? '*' : origins,
      methods: METHODS,
      // Request headers are reflected from the preflight (Authorization, x-dbname, Content-Type, …).
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 86400,
      strictPreflight: false,
    });
  });

  const exposed = EXPOSED_HEADERS.join(', ');
  if (anyOrigin) {
    app.addHook('onRequest', (req, reply, done) => {
      if (req.method !== 'OPTIONS') reply.header('access-control-allow-origin', '*').header('access-control-expose-headers', exposed);
      done();
    });
    return;
  }
  const allowed = new Set(origins);
  app.addHook('onRequest', (req, reply, done) => {
    if (req.method !== 'OPTIONS') {
      // The answer depends on Origin, so caches must key on it (as @fastify/cors does for a list).
      reply.header('vary', 'Origin');
      const origin = req.headers.origin;
      if (origin !== undefined && allowed.has(origin)) reply.header('access-control-allow-origin', origin);
      reply.header('access-control-expose-headers', exposed);
    }
    done();
  });
}
