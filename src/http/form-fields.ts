import type { FastifyRequest } from 'fastify';

/**
 * A request's body as an object of values, for endpoints that take JSON. PocketBase binds a form like
 * JSON, and clients sign in with one (pocketbase-typegen's `--email/--password`): the body layer
 * (plugins/form-body.ts) has already read JSON, urlencoded and multipart bodies (`@jsonPayload`
 * included) into `req.body` for every route that does not stream its parts itself.
 */
export async function bodyValues(req: FastifyRequest): Promise<unknown> {
  return req.body ?? {};
}
