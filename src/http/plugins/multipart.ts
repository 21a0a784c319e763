import { fastifyMultipart } from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';

/** Default largest uploaded file, in bytes (API contract §9); per-field `maxSize` narrows it. */
export const DEFAULT_UPLOAD_LIMIT = 5 * 1024 * 1024;

/**
 * `multipart/form-data` for the routes that take uploads (record files, migration upload and import).
 * Registered once for the whole app so every domain streams parts through the same limits; routes read
 * them with `req.parts()` / `req.file()`. Nothing is buffered here: parts are streamed to their consumer.
 */
export async function registerMultipart(app: FastifyInstance, options: { fileSizeLimit?: number; fieldSizeLimit: number }): Promise<void> {
  const limits = {
    fileSize: options.fileSizeLimit ?? DEFAULT_UPLOAD_LIMIT,
    fieldSize: options.fieldSizeLimit,
    files: 100,
    fields: 1000,
    parts: 1100,
  };
  // The plugin adds an async onResponse hook to every route, to delete the temporary files of
  // `saveRequestFiles()`, which Cairn never calls (parts are streamed): every request, a view by id
  // included, paid two promises for it. It is installed through a view of the app that drops that
  // hook and forwards everything else (decorators, the content-type parser) to the app itself.
  const withoutCleanup = new Proxy(app, {
    get: (target, prop, receiver) =>
      prop === 'addHook' ? (name: string, fn: never) => (name === 'onResponse' ? receiver : target.addHook(name as 'onRequest', fn)) : Reflect.get(target, prop, receiver),
  });
  await new Promise<void>((resolve, reject) => fastifyMultipart(withoutCleanup, { limits }, (err) => (err ? reject(err) : resolve())));
}
