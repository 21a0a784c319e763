import { ForbiddenError, UnauthorizedError } from './errors.ts';
import type { HookAuth, RouteMiddleware } from './types.ts';

/** Superusers, and API keys with the `admin` role (which act as one everywhere in Cairn). */
export function isSuperuser(auth: HookAuth | null): boolean {
  if (!auth) return false;
  if (auth.collectionName === '_superusers') return true;
  return auth.collectionName === '_api_keys' && Array.isArray(auth.roles) && auth.roles.includes('admin');
}

/**
 * A route middleware admitting signed-in callers only: any auth record, superuser or API key, or,
 * with names given, records of those collections (`requireAuth('users')`). 401 without a caller,
 * 403 for another collection's.
 */
export function requireAuth(...collections: string[]): RouteMiddleware {
  const allowed = collections.map((c) => c.toLowerCase());
  return async (e) => {
    if (!e.auth) throw new UnauthorizedError();
    if (allowed.length > 0 && !allowed.includes(String(e.auth.collectionName).toLowerCase())) throw new ForbiddenError();
    await e.next();
  };
}

/** A route middleware admitting superusers (and `admin`-role API keys) only. */
export function requireSuperuser(): RouteMiddleware {
  return async (e) => {
    if (!e.auth) throw new UnauthorizedError();
    if (!isSuperuser(e.auth)) throw new ForbiddenError('Only superusers may perform this request.');
    await e.next();
  };
}
