import { badRequest } from '../errors.ts';

/** The JSON object an auth endpoint reads its fields from; anything else is a 400. */
export function bodyOf(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}
