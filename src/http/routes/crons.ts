import type { FastifyInstance } from 'fastify';
import { notFound } from '../../errors.ts';
import type { HookRuntime } from '../../hooks/runtime.ts';
import type { SystemCrons } from '../../jobs/system-crons.ts';
import { requireSuperuser } from '../guards.ts';

/**
 * PocketBase's `/api/crons`, for superusers: the server's own jobs under PocketBase's ids
 * (`__pbLogsCleanup__`, `__pbDBOptimize__`, `__pbMFACleanup__`, `__pbOTPCleanup__`, and
 * `__pbAutoBackup__` when automatic backups are on; jobs/system-crons.ts), then the cron jobs
 * application code added (`cronAdd` in hooks), listed as `{id, expression}` and run now by id.
 * (Cairn's webhook cron jobs are per database, under `/api/webhooks/cron`.)
 */
export function cronsRoutes(hooks: HookRuntime | undefined, system?: SystemCrons) {
  return async (app: FastifyInstance): Promise<void> => {
    const noDb = { config: { database: false } };
    app.get('/api/crons', noDb, async (req) => {
      requireSuperuser(req.ctx, 'list cron jobs');
      return [...(system?.list() ?? []), ...(hooks?.status().cron ?? []).map((c) => ({ id: c.name, expression: c.schedule }))];
    });
    app.post<{ Params: { id: string } }>('/api/crons/:id', noDb, async (req, reply) => {
      requireSuperuser(req.ctx, 'run cron jobs');
      const own = system?.find(req.params.id);
      if (own) {
        await system!.run(own);
        return reply.status(204).send();
      }
      if (!hooks) throw notFound('Missing or invalid cron job.');
      await hooks.runCron(req.params.id);
      return reply.status(204).send();
    });
  };
}
