import type { FastifyInstance } from 'fastify';
import type { BackupService } from '../../backups/service.ts';
import { badRequest, forbidden, notFound } from '../../errors.ts';
import type { FileTokens } from '../../files/tokens.ts';
import { malformedMultipart } from '../../files/uploads.ts';
import { requireAdmin } from '../guards.ts';

type KeyParams = { Params: { key: string } };
const noDb = { config: { database: false } } as const;
// Backups hold the whole instance: far larger than any record upload may be.
const BACKUP_UPLOAD_LIMIT = 1024 ** 4;
const KEY = /^[a-z0-9_-]{1,96}\.zip$/;

/** Backups (API contract §15, PocketBase v0.22's `/api/backups`): administrators only. */
export function backupRoutes(backups: BackupService, fileTokens: FileTokens) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/backups', noDb, async (req) => {
      requireAdmin(req.ctx);
      return backups.list();
    });

    app.post('/api/backups', noDb, async (req, reply) => {
      requireAdmin(req.ctx);
      await backups.create(req.body);
      return reply.status(204).send();
    });

    app.post('/api/backups/upload', { config: { database: false, multipart: true } }, async (req, reply) => {
      requireAdmin(req.ctx);
      if (!req.isMultipart()) throw badRequest('Send the backup as multipart/form-data, in the field "file".', { file: { code: 'validation_required', message: 'Missing file.' } });
      let part: Awaited<ReturnType<typeof req.file>>;
      try {
        part = await req.file({ limits: { fileSize: BACKUP_UPLOAD_LIMIT } });
      } catch (err) {
        throw malformedMultipart(err);
      }
      if (!part || part.fieldname !== 'file') throw badRequest('Send the backup in the multipart field "file".', { file: { code: 'validation_required', message: 'Missing file.' } });
      try {
        await backups.upload(part.filename, part.file);
      } finally {
        part.file.resume();
      }
      return reply.status(204).send();
    });

    // Links carry no Authorization header: downloads take an administrator's file token (`POST
    // /api/files/token`) in `?token=`, as PocketBase's do.
    app.get<KeyParams & { Querystring: { token?: string | string[] } }>(
      '/api/backups/:key',
      { config: { database: false, authenticate: false } },
      async (req, reply) => {
        if (!KEY.test(req.params.key)) throw notFound();
        const token = Array.isArray(req.query.token) ? req.query.token[0] : req.query.token;
        if (!token || !(await fileTokens.admin(token, req.ip))) throw forbidden('Insufficient permissions to access the resource.');
        const { stream, size } = await backups.open(req.params.key);
        return reply
          .header('content-type', 'application/zip')
          .header('content-disposition', `attachment; filename="${req.params.key}"`)
          .header('content-length', String(size))
          .header('cache-control', 'private, no-store')
          .send(stream);
      },
    );

    app.delete<KeyParams>('/api/backups/:key', noDb, async (req, reply) => {
      requireAdmin(req.ctx);
      await backups.delete(req.params.key);
      return reply.status(204).send();
    });

    app.post<KeyParams>('/api/backups/:key/restore', noDb, async (req, reply) => {
      requireAdmin(req.ctx);
      await backups.restore(req.params.key);
      return reply.status(204).send();
    });
  };
}
