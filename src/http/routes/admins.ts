import type { FastifyInstance } from 'fastify';
import type { AdminPasswordReset } from '../../auth/admin-flows.ts';
import { adminJson, type AdminRow, type AdminService } from '../../auth/admins.ts';
import type { SuperuserIps } from '../../auth/superuser-ips.ts';
import type { TokenService } from '../../auth/tokens.ts';
import { unauthorized } from '../../errors.ts';
import { requireAdmin } from '../guards.ts';
import { identityLimited } from '../plugins/rate-limit.ts';

type Body = Record<string, unknown> | undefined;
const noDb = { config: { database: false } } as const;
const noDbLimited = { config: { database: false, ...identityLimited.config } } as const;

/** PocketBase v0.22's /api/admins API. Administrators are instance-wide, so no database is needed. */
export function adminRoutes(admins: AdminService, tokens: TokenService, passwordReset: AdminPasswordReset, superuserIps?: SuperuserIps) {
  const authResult = async (admin: AdminRow, ip: string) => {
    superuserIps?.check(ip);
    const token = await tokens.sign({ id: admin.id, type: 'admin', tokenKey: admin.tokenKey });
    const json = adminJson(admin);
    // `admin` for PocketBase's SDK, `user` for the spec's auth result shape.
    return { token, admin: json, user: json };
  };

  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/admins/auth-with-password', noDbLimited, async (req) => {
      const body = (req.body ?? {}) as Body;
      return authResult(await admins.authenticate(body?.identity ?? body?.email, body?.password), req.ip);
    });

    app.post('/api/admins/request-password-reset', noDbLimited, async (req, reply) => {
      await passwordReset.request(req.body ?? {});
      return reply.status(204).send();
    });

    app.post('/api/admins/confirm-password-reset', noDbLimited, async (req, reply) => {
      await passwordReset.confirm(req.body ?? {});
      return reply.status(204).send();
    });

    app.post('/api/admins/auth-refresh', noDb, async (req) => {
      if (req.ctx.auth.type !== 'admin') throw unauthorized();
      return authResult(await admins.get(req.ctx.auth.id), req.ip);
    });

    app.get('/api/admins/me', noDb, async (req) => {
      if (req.ctx.auth.type !== 'admin') throw unauthorized();
      return adminJson(await admins.get(req.ctx.auth.id));
    });

    app.get('/api/admins/has-admins', noDb, async () => ({ hasAdmins: (await admins.count()) > 0 }));

    app.post('/api/admins/init', noDbLimited, async (req) => {
      // Refused before the administrator is made, not after.
      superuserIps?.check(req.ip);
      return authResult(await admins.init(req.body ?? {}), req.ip);
    });

    app.get('/api/admins', noDb, async (req) => {
      requireAdmin(req.ctx);
      return admins.list(req.query as Record<string, unknown>);
    });

    // v0.22 lets anyone create the first administrator here while there is none (its installer did).
    app.post('/api/admins', noDbLimited, async (req) => {
      if (req.ctx.auth.type === 'guest') return adminJson(await admins.createFirst(req.body ?? {}));
      requireAdmin(req.ctx);
      return adminJson(await admins.create(req.body ?? {}));
    });

    app.get<{ Params: { id: string } }>('/api/admins/:id', noDb, async (req) => {
      requireAdmin(req.ctx);
      return adminJson(await admins.get(req.params.id));
    });

    app.patch<{ Params: { id: string } }>('/api/admins/:id', noDb, async (req) => {
      requireAdmin(req.ctx);
      return adminJson(await admins.update(req.params.id, req.body ?? {}));
    });

    app.delete<{ Params: { id: string } }>('/api/admins/:id', noDb, async (req, reply) => {
      requireAdmin(req.ctx);
      await admins.delete(req.params.id);
      return reply.status(204).send();
    });
  };
}
