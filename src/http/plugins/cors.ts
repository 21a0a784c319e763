import cors from '@fastify/cors';
import type { FastifyInstance } from 'fastify';

/**
 * Cross-origin requests from browser apps, which is how the PocketBase SDK is mostly used. Allowed
 * for every origin by default, as PocketBase does: Cairn authenticates with bearer tokens, never with
 * cookies, so a foreign page gains nothing a plain HTTP client lacks. `CAIRN_CORS_ORIGINS` narrows it.
 * Preflights are answered before the request context, so they need no database or token.
 */
export async function registerCors(app: FastifyInstance, origins: string[]): Promise<void> {
  await app.register(cors, {
    origin: origins.includes('*') ? '*' : origins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    // Request headers are reflected from the preflight (Authorization, x-dbname, Content-Type, …).
    exposedHeaders: ['Retry-After', 'Content-Disposition'],
    maxAge: 86400,
    strictPreflight: false,
  });
}
