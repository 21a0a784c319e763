import { badRequest, validationFailed } from '../errors.ts';

/** The JSON object an auth endpoint reads its fields from; anything else is a 400. */
export function bodyOf(body: unknown): Record<string, unknown> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  return body as Record<string, unknown>;
}

/** Longest impersonation token PocketBase's settings allow (about three years), in seconds. */
export const MAX_IMPERSONATION_SECONDS = 94670856;

/** The `duration` of an impersonation body: whole seconds, 0 (or absent) for the default lifetime. */
export function impersonationSeconds(input: unknown): number {
  const duration = bodyOf(input ?? {}).duration ?? 0;
  if (typeof duration !== 'number' || !Number.isInteger(duration) || duration < 0 || duration > MAX_IMPERSONATION_SECONDS) {
    throw validationFailed({ duration: { code: 'validation_invalid_value', message: `Must be an integer from 0 (the default token lifetime) to ${MAX_IMPERSONATION_SECONDS} seconds.` } });
  }
  return duration;
}
