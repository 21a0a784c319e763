import type { FastifyInstance } from 'fastify';
import type { Authenticator } from '../../auth/authenticate.ts';
import { bearerOf } from '../../auth/authenticate.ts';
import type { WorkflowService } from '../../workflows/service.ts';
import { requireAdmin } from '../guards.ts';

type NameParams = { Params: { name: string } };

/** Inbound workflows of the `x-dbname` database (API contract §7). */
export function workflowRoutes(workflows: WorkflowService, authenticator: Authenticator) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/workflows', async (req) => {
      requireAdmin(req.ctx);
      return workflows.create(req.ctx.db, req.body);
    });

    app.get('/api/workflows', async (req) => {
      requireAdmin(req.ctx);
      return workflows.list(req.ctx.db, req.query as Record<string, unknown>);
    });

    app.get<NameParams>('/api/workflows/:name', async (req) => {
      requireAdmin(req.ctx);
      return workflows.get(req.ctx.db, req.params.name);
    });

    app.delete<NameParams>('/api/workflows/:name', async (req, reply) => {
      requireAdmin(req.ctx);
      await workflows.remove(req.ctx.db, req.params.name);
      return reply.status(204).send();
    });

    // The bearer may be the workflow's own secret, which is not a Cairn token: the route checks it.
    app.post<NameParams>('/api/workflows/:name/events', { config: { authenticate: false } }, async (req, reply) => {
      const header = req.headers.authorization;
      const bearer = bearerOf(Array.isArray(header) ? header[0] : header);
      const accepted = await workflows.receive(req.ctx.dbName, req.ctx.db, req.params.name, bearer, req.body ?? {}, () =>
        authenticator.authenticate(req, req.ctx.dbName, req.ctx.db),
      );
      return reply.status(202).send(accepted);
    });

    app.get<NameParams>('/api/workflows/:name/runs', async (req) => {
      requireAdmin(req.ctx);
      return workflows.runs(req.ctx.db, req.params.name, req.query as Record<string, unknown>);
    });

    app.get<{ Params: { name: string; id: string } }>('/api/workflows/:name/runs/:id', async (req) => {
      requireAdmin(req.ctx);
      return workflows.run(req.ctx.db, req.params.name, req.params.id);
    });
  };
}
