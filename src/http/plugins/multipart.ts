import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';

/** Default largest uploaded file, in bytes (API contract §9); per-field `maxSize` narrows it. */
export const DEFAULT_UPLOAD_LIMIT = 5 * 1024 * 1024;

/**
 * `multipart/form-data` for the routes that take uploads (record files, migration upload and import).
 * Registered once for the whole app so every domain streams parts through the same limits; routes read
 * them with `req.parts()` / `req.file()`. Nothing is buffered here: parts are streamed to their consumer.
 */
export async function registerMultipart(app: FastifyInstance, options: { fileSizeLimit?: number; fieldSizeLimit: number }): Promise<void> {
  await app.register(multipart, {
    limits: {
      fileSize: options.fileSizeLimit ?? DEFAULT_UPLOAD_LIMIT,
      fieldSize: options.fieldSizeLimit,
      files: 100,
      fields: 1000,
      parts: 1100,
    },
  });
}
