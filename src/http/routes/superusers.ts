import { bodyValues } from '../form-fields.ts';
import type { FastifyInstance } from 'fastify';
import type { AdminPasswordReset } from '../../auth/admin-flows.ts';
import { authMethodsJson } from '../../auth/auth-methods.ts';
import type { SuperuserService } from '../../auth/superusers.ts';
import { authSettingsOf } from '../../collections/auth-settings.ts';
import { SUPERUSERS_COLLECTION } from '../../collections/superusers.ts';
import { param } from '../../records/query-params.ts';
import { parseFieldsParam, pickFields } from '../../records/fields-param.ts';
import { requireSuperuser } from '../guards.ts';
import { isPrivileged, type RequestContext } from '../../context.ts';
import { forbidden } from '../../errors.ts';
import { identityLimited } from '../plugins/rate-limit.ts';

type IdParams = { Params: { id: string } };
const BASE = '/api/collections/_superusers';
// Superusers are instance-wide: these routes work whatever `x-dbname` says.
const noDb = { config: { database: false } } as const;
const noDbLimited = { config: { database: false, ...identityLimited.config } } as const;

/**
 * PocketBase ≥ 0.23's `_superusers` endpoints (API contract §17), for its SDK 0.23+: Cairn's
 * administrators as auth records. Static paths, so they win over the `:collection` routes of the
 * stored collections; the other auth endpoints refuse `_superusers` (`RecordAuthService.authCollection`).
 */
export function superuserRoutes(superusers: SuperuserService, passwordReset: AdminPasswordReset) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post(`${BASE}/auth-with-password`, noDbLimited, async (req) => superusers.authWithPassword(req.ctx, await bodyValues(req)));

    app.post(`${BASE}/auth-refresh`, noDb, async (req) => superusers.refresh(req.ctx));

    app.get(`${BASE}/auth-methods`, noDb, async (req) => {
      const methods = authMethodsJson(authSettingsOf(SUPERUSERS_COLLECTION), []);
      const fields = parseFieldsParam(param((req.query as Record<string, unknown>).fields));
      return fields ? pickFields(methods, fields) : methods;
    });

    app.post(`${BASE}/request-password-reset`, noDbLimited, async (req, reply) => {
      await passwordReset.request(req.body ?? {});
      return reply.status(204).send();
    });

    app.post(`${BASE}/confirm-password-reset`, noDbLimited, async (req, reply) => {
      await passwordReset.confirm(req.body ?? {});
      return reply.status(204).send();
    });

    app.post<IdParams>(`${BASE}/impersonate/:id`, noDb, async (req) => {
      requireSuperuser(req.ctx, 'impersonate');
      return superusers.impersonate(req.ctx, req.params.id, req.body);
    });

    app.get(`${BASE}/records`, noDb, async (req) => {
      requireSuperuserRecords(req.ctx);
      return superusers.list(req.query as Record<string, unknown>);
    });

    app.post(`${BASE}/records`, noDb, async (req) => {
      requireSuperuserRecords(req.ctx);
      return superusers.create(req.body);
    });

    app.get<IdParams>(`${BASE}/records/:id`, noDb, async (req) => {
      requireSuperuserRecords(req.ctx);
      return superusers.view(req.params.id);
    });

    app.patch<IdParams>(`${BASE}/records/:id`, noDb, async (req) => {
      requireSuperuserRecords(req.ctx);
      return superusers.update(req.params.id, req.body);
    });

    app.delete<IdParams>(`${BASE}/records/:id`, noDb, async (req, reply) => {
      requireSuperuserRecords(req.ctx);
      await superusers.delete(req.params.id);
      return reply.status(204).send();
    });
  };
}

/**
 * `_superusers` records, as PocketBase serves a collection whose rules are all closed: anyone but an
 * administrator (a guest too) gets 403, the answer of a `null` rule (API contract §6).
 */
function requireSuperuserRecords(ctx: RequestContext): void {
  if (!isPrivileged(ctx.auth)) throw forbidden('Only superusers can perform this action.');
}
