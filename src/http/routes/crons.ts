import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.ts';
import type { HookRuntime } from '../../hooks/runtime.ts';
import { requireSuperuser } from '../guards.ts';

/**
 * PocketBase's `/api/crons`: the cron jobs application code added (`cronAdd` in hooks), listed as
 * `{id, expression}` and run now by id, for superusers. Without hooks the list is empty. (Cairn's
 * webhook cron jobs are per database, under `/api/webhooks/cron`.)
 */
export function cronsRoutes(hooks: HookRuntime | undefined) {
  return async (app: FastifyInstance): Promise<void> => {
    const noDb = { config: { database: false } };
    app.get('/api/crons', noDb, async (req) => {
      requireSuperuser(req.ctx, 'list cron jobs');
      return (hooks?.status().cron ?? []).map((c) => ({ id: c.name, expression: c.schedule }));
    });
    app.post<{ Params: { id: string } }>('/api/crons/:id', noDb, async (req, reply) => {
      requireSuperuser(req.ctx, 'run cron jobs');
      if (!hooks) throw notFound('Missing or invalid cron job.');
      await hooks.runCron(req.params.id);
      return reply.status(204).send();
    });
  };
}
