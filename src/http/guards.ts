import { isPrivileged, type RequestContext } from '../context.ts';
import { forbidden, unauthorized } from '../errors.ts';

/**
 * Management endpoints (collections, databases, keys, settings, admins, webhooks, migrations) are for
 * administrators and `admin`-role API keys: 401 without credentials, 403 with a non-admin identity.
 */
export function requireAdmin(ctx: RequestContext): void {
  if (isPrivileged(ctx.auth)) return;
  if (ctx.auth.type === 'guest') throw unauthorized();
  throw forbidden('Only administrators can perform this action.');
}

/** Endpoints about the caller's own session. */
export function requireAuth(ctx: RequestContext): void {
  if (ctx.auth.type === 'guest') throw unauthorized();
}

/**
 * What only an administrator's own session may do (PocketBase ≥ 0.23's superuser-only actions, such as
 * impersonation): 401 without credentials, 403 for everyone else, `admin`-role API keys included.
 */
export function requireSuperuser(ctx: RequestContext, action: string): void {
  if (ctx.auth.type === 'admin') return;
  if (ctx.auth.type === 'guest') throw unauthorized();
  throw forbidden(`Only superusers can ${action}.`);
}
