import type { FastifyInstance } from 'fastify';
import type { Mailer } from '../../auth/mail/mailer.ts';
import { sendTestMail } from '../../auth/mail/test-mail.ts';
import { appleClientSecret } from '../../auth/oauth2/apple.ts';
import { type StoredS3, testS3 } from '../../files/storage/check.ts';
import type { FileStorage } from '../../files/storage/types.ts';
import type { Collection } from '../../collections/model.ts';
import type { SettingsService } from '../../settings/service.ts';
import { requireAdmin, requireSuperuser } from '../guards.ts';

const noDb = { config: { database: false } } as const;

/** Instance settings (system.db); secrets are accepted but never returned. */
export function settingsRoutes(
  settings: SettingsService,
  mailer: Mailer,
  files: { readonly onEnvironmentS3: boolean } & FileStorage,
  /** A collection of the main database by name or id (the test mail's `collection`). */
  findCollection: (ref: string) => Promise<Collection | undefined>,
) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/settings', noDb, async (req) => {
      requireAdmin(req.ctx);
      return settings.view();
    });

    app.patch('/api/settings', noDb, async (req) => {
      requireAdmin(req.ctx);
      return settings.patch(req.body ?? {});
    });

    app.post('/api/settings/test/s3', noDb, async (req, reply) => {
      requireSuperuser(req.ctx, 'test the S3 storage');
      await testS3(files, async () => ({ storage: await settings.get<StoredS3>('s3'), backups: (await settings.get<{ s3: StoredS3 }>('backups')).s3 }), req.body ?? {});
      return reply.status(204).send();
    });

    app.post('/api/settings/apple/generate-client-secret', noDb, async (req) => {
      requireSuperuser(req.ctx, 'generate client secrets');
      return appleClientSecret(req.body ?? {});
    });

    app.post('/api/settings/test/email', noDb, async (req, reply) => {
      requireAdmin(req.ctx);
      await sendTestMail(mailer, settings, req.body ?? {}, findCollection);
      return reply.status(204).send();
    });
  };
}
