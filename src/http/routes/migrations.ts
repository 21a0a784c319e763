import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, unsupportedMediaType } from '../../errors.ts';
import { malformedMultipart } from '../../files/uploads.ts';
import type { MigrationService } from '../../migrations/service.ts';
import { requireAdmin } from '../guards.ts';
import { DEFAULT_UPLOAD_LIMIT } from '../plugins/multipart.ts';

type VersionParams = { Params: { version: string } };
type Query = Record<string, unknown>;

const noDb = { config: { database: false } } as const;
/** Routes that read their multipart body themselves (plugins/form-body.ts). */
const noDbUpload = { config: { database: false, multipart: true } } as const;
const YAML_TYPES = ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'];
const ZIP_TYPES = ['application/zip', 'application/x-zip-compressed'];

/** A file sent as the multipart field `file` or as a raw body of one of the route's content types. */
async function uploadedFile(req: FastifyRequest, kind: string): Promise<Buffer> {
  if (req.isMultipart()) {
    let part: Awaited<ReturnType<FastifyRequest['file']>>;
    try {
      part = await req.file();
    } catch (err) {
      throw malformedMultipart(err);
    }
    if (!part || part.fieldname !== 'file') {
      throw badRequest(`Send the ${kind} in the multipart field "file".`, { file: { code: 'validation_required', message: 'Missing file.' } });
    }
    return part.toBuffer().catch((err: unknown) => Promise.reject(malformedMultipart(err)));
  }
  if (Buffer.isBuffer(req.body)) return req.body;
  throw unsupportedMediaType(`Send the ${kind} as multipart/form-data (field "file") or as a raw ${kind === 'archive' ? 'application/zip' : 'application/yaml'} body.`);
}

/** The migrations API (spec "Migrations", API contract §8): instance-wide and for administrators only. */
export function migrationRoutes(migrations: MigrationService) {
  return async (app: FastifyInstance): Promise<void> => {
    // Scoped to these routes: raw YAML for upload, raw ZIP for import.
    app.addContentTypeParser([...YAML_TYPES, ...ZIP_TYPES], { parseAs: 'buffer', bodyLimit: DEFAULT_UPLOAD_LIMIT }, (_req, body, done) => done(null, body));

    app.addHook('onRequest', async (req) => {
      requireAdmin(req.ctx);
    });

    app.get('/api/migrations', noDb, async () => migrations.list());

    app.get('/api/migrations/status', noDb, async () => migrations.status());

    app.get('/api/migrations/generate', noDb, async (req) => {
      const query = req.query as Query;
      return migrations.generate({ name: query.name, description: query.description });
    });

    app.post('/api/migrations/save', noDb, async (req) => migrations.save(req.body));

    app.get('/api/migrations/load', noDb, async (req) => migrations.load((req.query as Query).version));

    app.post('/api/migrations/upload', noDbUpload, async (req) => {
      const file = await uploadedFile(req, 'migration');
      return migrations.upload(file.toString('utf8'));
    });

    app.get('/api/migrations/export', noDb, async (_req, reply) => {
      const zip = await migrations.exportArchive();
      return reply.header('content-type', 'application/zip').header('content-disposition', 'attachment; filename="migrations.zip"').send(zip);
    });

    app.post('/api/migrations/import', noDbUpload, async (req) => migrations.importArchive(await uploadedFile(req, 'archive')));

    app.post('/api/migrations/apply-pending', noDb, async () => migrations.applyPending());

    app.get<VersionParams>('/api/migrations/:version/download', noDb, async (req, reply) => {
      const { fileName, text } = await migrations.download(req.params.version);
      return reply
        .header('content-type', 'application/yaml; charset=utf-8')
        .header('content-disposition', `attachment; filename="${fileName}"`)
        .send(text);
    });

    app.post<VersionParams>('/api/migrations/:version/apply', noDb, async (req) => migrations.apply(req.params.version));

    app.post<VersionParams>('/api/migrations/:version/rollback', noDb, async (req) => migrations.rollback(req.params.version));

    app.delete<VersionParams>('/api/migrations/:version', noDb, async (req, reply) => {
      await migrations.delete(req.params.version);
      return reply.status(204).send();
    });
  };
}
