import type { FastifyInstance } from 'fastify';
import type { Mailer } from '../../auth/mail/mailer.ts';
import { sendTestMail } from '../../auth/mail/test-mail.ts';
import type { SettingsService } from '../../settings/service.ts';
import { requireAdmin } from '../guards.ts';

const noDb = { config: { database: false } } as const;

/** Instance settings (system.db); secrets are accepted but never returned. */
export function settingsRoutes(settings: SettingsService, mailer: Mailer) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/settings', noDb, async (req) => {
      requireAdmin(req.ctx);
      return settings.view();
    });

    app.patch('/api/settings', noDb, async (req) => {
      requireAdmin(req.ctx);
      return settings.patch(req.body ?? {});
    });

    app.post('/api/settings/test/email', noDb, async (req, reply) => {
      requireAdmin(req.ctx);
      await sendTestMail(mailer, settings, req.body ?? {});
      return reply.status(204).send();
    });
  };
}
