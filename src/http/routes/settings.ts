import type { FastifyInstance } from 'fastify';
import type { SettingsService } from '../../settings/service.ts';
import { requireAdmin } from '../guards.ts';

const noDb = { config: { database: false } } as const;

/** Instance settings (system.db); secrets are accepted but never returned. */
export function settingsRoutes(settings: SettingsService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/settings', noDb, async (req) => {
      requireAdmin(req.ctx);
      return settings.view();
    });

    app.patch('/api/settings', noDb, async (req) => {
      requireAdmin(req.ctx);
      return settings.patch(req.body ?? {});
    });
  };
}
